// The jobs page (#/jobs): every job in a table, a page at a time (the API's
// cursor paging, so 100,000 jobs cost no more than 50), with a search by
// name, a namespace filter and a paused/active filter, and the operations
// the user's role allows.

import * as api from './api.js';
import {h, replace, time, badge, table, errorBox, debounce, jobHref, runHref, field, notify,
  pager as pagerButtons} from './dom.js';
import {jobActions} from './actions.js';
import {definitionForm} from './definition_form.js';

const PAGE_SIZE = 50;
// A filter that matches few jobs may give short pages with a cursor: read
// on, at most this many requests, to fill the page.
const MAX_FILL_REQUESTS = 10;

// Kept while the user visits other pages, so that coming back shows the
// same filters.
const state = {search: '', namespace: '', paused: '', cursors: [null]};

export function render(main, params, ctx) {
  const controller = new AbortController();
  const search = h('input', {type: 'search', value: state.search, placeholder: 'part of a name'});
  const namespace = h('input', {type: 'text', value: state.namespace, placeholder: 'any'});
  const paused = h('select', {},
      h('option', {value: ''}, 'All'),
      h('option', {value: 'false'}, 'Active'),
      h('option', {value: 'true'}, 'Paused'));
  paused.value = state.paused;
  const results = h('div', {id: 'jobs-results'});
  const pager = h('div', {class: 'pager'});

  // The filters take effect at once (a user who leaves the page and comes
  // back finds what they typed); the listing is read 250 ms after the last
  // keystroke.
  const loadSoon = debounce(() => load(), 250);
  const filter = (now) => () => {
    state.search = search.value.trim();
    state.namespace = namespace.value.trim();
    state.paused = paused.value;
    state.cursors = [null];
    if (now) load();
    else loadSoon();
  };
  search.addEventListener('input', filter(false));
  namespace.addEventListener('input', filter(false));
  paused.addEventListener('change', filter(true));

  let generation = 0;
  async function load() {
    const mine = ++generation;
    const page = state.cursors.length - 1;
    try {
      const {jobs, next} = await fetchPage(state.cursors[page]);
      if (mine !== generation || controller.signal.aborted) return;
      showJobs(jobs);
      showPager(page, next, jobs.length);
    } catch (e) {
      if (mine === generation) replace(results, errorBox(e));
    }
  }

  async function fetchPage(cursor) {
    const jobs = [];
    let next = cursor;
    for (let i = 0; i < MAX_FILL_REQUESTS && jobs.length < PAGE_SIZE; ++i) {
      const body = await api.get('/v1/jobs', {
        limit: PAGE_SIZE - jobs.length, cursor: next, last_run: true,
        search: state.search, namespace: state.namespace, paused: state.paused,
      });
      jobs.push(...body.jobs);
      next = body.next_cursor;
      if (next === null) break;
    }
    return {jobs, next};
  }

  function showJobs(jobs) {
    if (jobs.length === 0) {
      replace(results, h('p', {class: 'muted'}, state.search || state.namespace || state.paused
        ? 'No job matches these filters.' : 'There are no jobs yet.'));
      return;
    }
    const rows = jobs.map((job) => {
      const key = api.jobKey(job.name);
      const spec = job.spec;
      const last = job.last_run;
      return [
        key.ns,
        h('a', {href: jobHref(key.ns, key.id), 'aria-label': job.name}, key.id),
        h('span', {}, job.status.schedule_description || spec.schedule || spec.at || '—',
            spec.schedule ? h('code', {class: 'sub'}, spec.schedule) : null),
        spec.zone || 'UTC',
        job.status.paused ? h('span', {class: 'muted'}, 'paused') : time(job.status.next_fire_time),
        last ? h('a', {href: runHref(key.ns, key.id, last.id), 'aria-label': `run ${last.id}: ${last.state}`},
            badge(last.state)) : h('span', {class: 'muted'}, 'never run'),
        job.status.paused ? badge('paused', 'Paused') : badge('running', 'Active'),
        jobActions(job, ctx, {onChange: load, onDeleted: load}) || '',
      ];
    });
    const headers = ['Namespace', 'Job', 'Schedule', 'Zone', 'Next fire', 'Last run', 'State'];
    if (ctx.canWrite) headers.push('Actions');
    else rows.forEach((r) => r.pop());
    replace(results, table('Jobs', headers, rows));
  }

  function showPager(page, next, count) {
    replace(pager, pagerButtons(state.cursors, next, load,
        {status: `Page ${page + 1}: ${count} job${count === 1 ? '' : 's'}`}));
  }

  const creator = h('div', {});
  replace(main,
      h('h1', {}, 'Jobs'),
      ctx.canWrite ? h('div', {class: 'actions'}, h('button', {type: 'button', id: 'new-job',
        onclick: () => newJobForm(creator)}, 'New job')) : null,
      creator,
      h('form', {class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault()},
          field('job-search', 'Search', search, {wide: true}),
          field('job-namespace', 'Namespace', namespace),
          field('job-state', 'State', paused)),
      results, pager);
  load();
  // Refreshes every 10 s, but not under a keyboard user's focus.
  const timer = setInterval(() => {
    if (!results.contains(document.activeElement) && !document.querySelector('dialog[open]')) load();
  }, 10000);
  return () => {
    controller.abort();
    clearInterval(timer);
    loadSoon.cancel();
  };
}

const TEMPLATE = {
  id: 'my-job',
  namespace: 'default',
  schedule: '*/5 * * * *',
  zone: 'UTC',
  http: {url: 'https://example.com/hook'},
};

// Creates a job from its definition (POST /v1/jobs), then shows its page.
function newJobForm(box) {
  const {form, focus} = definitionForm({
    id: 'new-job-definition',
    label: 'Job definition (JSON)',
    help: 'The keys of a job file (docs/jobs.md). A job that runs a command (shell) needs the admin role.',
    text: JSON.stringify(TEMPLATE, null, 2),
    submitLabel: 'Create job',
    submit: async (body) => {
      const made = await api.post('/v1/jobs', body);
      const key = api.jobKey(made.name);
      notify(`Created ${made.name}.`);
      location.hash = jobHref(key.ns, key.id);
    },
    cancel: () => replace(box),
  });
  replace(box, h('h2', {}, 'New job'), form);
  focus();
}
