// Dead letters (#/dead-letters): runs that ended failed with their retries
// exhausted (GET /v1/dead-letters), newest first, filterable by namespace and
// job name, with "Retry now" for users who may write.

import * as api from './api.js';
import {h, replace, time, table, errorBox, notify, debounce, jobHref, runHref, field,
  pager as pagerButtons} from './dom.js';

const PAGE_SIZE = 50;

export function render(main, params, ctx) {
  const namespace = h('input', {type: 'text', placeholder: 'any'});
  const search = h('input', {type: 'search', placeholder: 'part of a job name'});
  const results = h('div', {id: 'dead-letters-results'});
  const pager = h('div', {class: 'pager'});
  let cursors = [null];
  let generation = 0;

  async function load() {
    const mine = ++generation;
    const page = cursors.length - 1;
    try {
      const body = await api.get('/v1/dead-letters', {limit: PAGE_SIZE, cursor: cursors[page],
        namespace: namespace.value.trim()});
      if (mine !== generation) return;
      const needle = search.value.trim().toLowerCase();
      const runs = body.runs.filter((r) => r.job.toLowerCase().includes(needle));
      show(runs);
      replace(pager, pagerButtons(cursors, body.next_cursor, load,
          {newer: 'Newer', older: 'Older', status: `Page ${page + 1}`}));
    } catch (e) {
      if (mine === generation) replace(results, errorBox(e));
    }
  }

  function show(runs) {
    if (runs.length === 0) {
      replace(results, h('p', {class: 'muted'}, 'No dead letters on this page.'));
      return;
    }
    const rows = runs.map((run) => {
      const key = api.jobKey(run.job);
      const cells = [
        h('a', {href: jobHref(key.ns, key.id)}, run.job),
        h('a', {href: runHref(key.ns, key.id, run.id)}, `run ${run.id}`),
        time(run.scheduled_time),
        String(run.attempt),
        run.detail,
      ];
      if (ctx.canRun) {
        cells.push(h('button', {type: 'button', 'aria-label': `Retry now: run ${run.id} of ${run.job}`,
          onclick: async (e) => {
            e.currentTarget.disabled = true;
            try {
              const made = await api.post(`/v1/jobs/${encodeURIComponent(key.ns)}/${encodeURIComponent(key.id)}/runs/${run.id}/retry`);
              notify(h('span', {}, `Retrying run ${run.id} of ${run.job}: `,
                  h('a', {href: runHref(key.ns, key.id, made.run_id)}, `run ${made.run_id}`)));
            } catch (err) {
              notify(errorBox(err), 'error');
            }
          }}, 'Retry now'));
      }
      return cells;
    });
    const headers = ['Job', 'Run', 'Scheduled', 'Attempts', 'Last error'];
    if (ctx.canRun) headers.push('Actions');
    replace(results, table('Dead letters', headers, rows));
  }

  const reset = debounce(() => {
    cursors = [null];
    load();
  }, 250);
  namespace.addEventListener('input', reset);
  search.addEventListener('input', () => load());
  replace(main,
      h('h1', {}, 'Dead letters'),
      h('p', {class: 'muted'}, 'Runs that failed after their last retry. Retrying one starts a new run of its job now.'),
      h('form', {class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault()},
          field('dead-namespace', 'Namespace', namespace),
          field('dead-search', 'Job name (filters this page)', search, {wide: true})),
      results, pager);
  load();
  return () => reset.cancel();
}
