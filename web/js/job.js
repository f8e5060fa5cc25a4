// A job's page (#/jobs/<namespace>/<id>): its definition (editable as JSON
// for API jobs and users who may write; read-only, naming the file, for a
// job file's jobs), its next 20 fire times with the daylight-saving changes
// they cross, and its history as a timeline and a table, refreshed as the
// event stream tells of the job's runs.

import * as api from './api.js';
import {h, replace, badge, errorBox, notify, throttle} from './dom.js';
import {definitionForm} from './definition_form.js';
import {jobActions} from './actions.js';
import {firesTable} from './fires.js';
import {loadHistory, timeline, historyTable} from './history.js';

const HISTORY_LIMIT = 20;

export function render(main, [ns, id], ctx) {
  const key = {ns, id};
  const path = api.jobPath(key);
  const name = ns === 'default' ? id : `${ns}/${id}`;
  const controller = new AbortController();
  const head = h('div', {});
  const definition = h('section', {'aria-labelledby': 'def-h'});
  const next = h('section', {'aria-labelledby': 'next-h'});
  const history = h('section', {'aria-labelledby': 'history-h'});
  replace(main, h('h1', {}, `Job ${name}`), head, definition, next, history);

  async function loadJob() {
    try {
      const job = await api.get(path);
      showHead(job);
      showDefinition(job);
    } catch (e) {
      replace(head, errorBox(e));
      if (e.status === 404) {
        replace(definition);
        replace(next);
      }
    }
  }

  function showHead(job) {
    const s = job.status;
    replace(head,
        h('dl', {class: 'facts'},
            h('dt', {}, 'State'), h('dd', {id: 'job-state'}, s.paused ? badge('paused', 'Paused') : badge('running', 'Active')),
            h('dt', {}, 'Schedule'), h('dd', {}, s.schedule_description || job.spec.schedule || job.spec.at || '—'),
            h('dt', {}, 'Zone'), h('dd', {}, job.spec.zone || 'UTC'),
            h('dt', {}, 'Generation'), h('dd', {}, String(s.generation))),
        jobActions(job, ctx, {onChange: refresh, onDeleted: () => {
          location.hash = '#/jobs';
        }}));
  }

  function showDefinition(job) {
    const fromFile = job.status.managed_by === 'file';
    const text = JSON.stringify(job.spec, null, 2);
    const body = [h('h2', {id: 'def-h'}, 'Definition')];
    if (fromFile) {
      body.push(h('p', {class: 'banner', id: 'managed-by'}, 'Defined by the job file ',
          h('code', {}, job.status.file), ': change it there. It is read-only here.'));
    }
    const pre = h('pre', {id: 'definition'}, text);
    body.push(pre);
    if (!fromFile && ctx.canWrite) {
      body.push(h('button', {type: 'button', class: 'secondary', onclick: () => edit(job, text)}, 'Edit definition'));
    }
    replace(definition, body);
  }

  // The definition as JSON in a text area; Save replaces the job (PUT) if
  // nobody changed it meanwhile (If-Match), else says so.
  function edit(job, text) {
    const {form, focus} = definitionForm({
      id: 'definition-edit',
      label: 'Job definition (JSON)',
      help: 'The keys of a job file (docs/jobs.md). Saving replaces the job, unless it changed meanwhile.',
      text,
      submitLabel: 'Save',
      submit: async (body) => {
        await api.request('PUT', path, {body, ifMatch: `"${job.status.revision}"`});
        notify(`Saved ${name}.`);
        refresh();
      },
      cancel: loadJob,
    });
    replace(definition, h('h2', {id: 'def-h'}, 'Definition'), form);
    focus();
  }

  async function loadNext() {
    try {
      const body = await api.get(`${path}/next`, {count: 20});
      replace(next, h('h2', {id: 'next-h'}, 'Next 20 fire times'),
          body.paused ? h('p', {class: 'banner'}, 'The job is paused: these fires will be skipped until it is resumed.') : null,
          firesTable('Next fire times', body.next, body.zone || 'UTC'));
    } catch (e) {
      replace(next, h('h2', {id: 'next-h'}, 'Next 20 fire times'), errorBox(e));
    }
  }

  async function loadRuns() {
    if (controller.signal.aborted) return;  // the user left the page
    try {
      const {runs, missed} = await loadHistory(key, HISTORY_LIMIT);
      if (controller.signal.aborted) return;
      replace(history, h('h2', {id: 'history-h'}, 'History'),
          h('p', {class: 'muted'}, `The newest ${HISTORY_LIMIT} runs, and the fires that did not run with the reason.`),
          timeline(runs), historyTable(key, runs, missed));
    } catch (e) {
      replace(history, h('h2', {id: 'history-h'}, 'History'), errorBox(e));
    }
  }

  function refresh() {
    loadJob();
    loadNext();
    loadRuns();
  }

  refresh();
  // Live: the job's run transitions reload the history (at most every 2 s).
  const reloadRuns = throttle(loadRuns, 2000);
  api.streamEvents(api.withQuery('/v1/events', {job: `${ns}/${id}`}), {
    signal: controller.signal,
    onEvent: reloadRuns,
  }).catch(() => {});
  return () => {
    controller.abort();
    reloadRuns.cancel();
  };
}
