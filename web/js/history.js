// A job's run history as the job page shows it: runs (with their attempts'
// timing) and the fires that did not run, with the reason in words ("Why
// didn't it run?"), as a timeline and as a table.

import * as api from './api.js';
import {h, svg, time, duration, badge, table, runHref} from './dom.js';

// What each reason of GET .../missed (docs/api.md) means.
const REASONS = {
  misfire_skip: 'missed: found too late (the daemon was down or overloaded); misfire policy "skip"',
  misfire_run_once: 'missed: only the newest of the late fires ran; misfire policy "run_once"',
  misfire_max_catchup: 'missed: more late fires than max_catchup',
  catchup_window: 'missed: older than the catch-up window',
  paused: 'not run: the job was paused',
  overlap: 'skipped: the previous run was still going (overlap policy)',
  buffer_full: 'skipped: the overlap buffer was full',
  replaced: 'skipped: a newer fire replaced it (overlap policy "replace")',
  job_removed: 'not run: the job was removed',
  fenced: 'not run: another scheduler took the job over',
  quota: 'missed: no execution slot came free within the misfire threshold (concurrency limit or namespace quota)',
  ended: 'not run: the job\'s end date had passed',
};

export function reasonText(reason) {
  return REASONS[reason] || `not run: ${reason}`;
}

// The newest `limit` runs of the job with their attempts, and its newest
// missed-fire records.
export async function loadHistory(key, limit) {
  const path = api.jobPath(key);
  const [runs, missed] = await Promise.all([
    api.get(`${path}/runs`, {limit}),
    api.get(`${path}/missed`, {limit}),
  ]);
  // The list has no attempt times: read each run (limit is small).
  const details = await Promise.all(runs.runs.map((r) => api.get(`${path}/runs/${r.id}`)));
  return {runs: details, missed: missed.missed};
}

function runTiming(run) {
  const first = run.attempts[0];
  const last = run.attempts[run.attempts.length - 1];
  const started = first ? Date.parse(first.started_at) : null;
  const finished = last && last.finished_at ? Date.parse(last.finished_at) : null;
  return {scheduled: Date.parse(run.scheduled_time), started, finished};
}

function barClass(state) {
  if (state === 'succeeded') return 'bar-succeeded';
  if (state === 'failed' || state === 'lost') return 'bar-failed';
  if (state === 'running' || state === 'pending' || state === 'retrying') return 'bar-running';
  return 'bar-other';
}

// An SVG timeline: a row a run, the scheduled time as a tick, the run from
// its first attempt's start to its last attempt's end as a bar coloured by
// outcome. The table beside it says the same in text.
export function timeline(runs) {
  if (runs.length === 0) return null;
  const now = Date.now();
  const timings = runs.map(runTiming);
  let t0 = Math.min(...timings.map((t) => t.scheduled));
  let t1 = Math.max(...timings.map((t) => t.finished || (t.started ? now : t.scheduled)));
  if (t1 - t0 < 1000) t1 = t0 + 1000;
  const left = 150;
  const width = 800;
  const rowH = 18;
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - 10);
  const rows = runs.map((run, i) => {
    const t = timings[i];
    const y = 20 + i * rowH;
    const end = t.finished || now;
    const label = `run ${run.id}: scheduled ${run.scheduled_time}` +
        (t.started ? `, started ${duration(t.started - t.scheduled)} later, took ${duration(end - t.started)}` : ', not started') +
        `, ${run.state}`;
    return svg('g', {}, svg('title', {}, label),
        svg('text', {x: 4, y: y + 12}, `run ${run.id}`),
        t.started ? svg('rect', {x: x(t.started), y: y + 3, width: Math.max(2, x(end) - x(t.started)),
          height: rowH - 6, class: barClass(run.state)}) : null,
        svg('line', {x1: x(t.scheduled), x2: x(t.scheduled), y1: y + 1, y2: y + rowH - 1, class: 'mark-scheduled'}));
  });
  const height = 30 + runs.length * rowH;
  return h('figure', {},
      svg('svg', {class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img',
        'aria-label': `Timeline of the newest ${runs.length} runs: scheduled time and run duration`},
      svg('line', {x1: left, x2: width - 10, y1: 15, y2: 15, class: 'axis'}),
      svg('text', {x: left, y: 11}, new Date(t0).toLocaleTimeString()),
      svg('text', {x: width - 10, y: 11, 'text-anchor': 'end'}, new Date(t1).toLocaleTimeString()),
      rows),
      h('figcaption', {class: 'legend'},
          h('span', {}, h('span', {class: 'swatch scheduled'}), 'scheduled'),
          h('span', {}, h('span', {class: 'swatch succeeded'}), 'succeeded'),
          h('span', {}, h('span', {class: 'swatch failed'}), 'failed'),
          h('span', {}, h('span', {class: 'swatch running'}), 'going'),
          h('span', {}, h('span', {class: 'swatch other'}), 'other')));
}

// Runs and not-run fires in one table, newest first.
export function historyTable(key, runs, missed) {
  const items = [
    ...runs.map((run) => ({at: run.scheduled_time, run})),
    ...missed.map((m) => ({at: m.last, missed: m})),
  ].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const notRun = [];
  const rows = items.map(({run, missed: m}, i) => {
    if (m) {
      notRun.push(i);
      const when = m.count > 1
        ? h('span', {}, time(m.first), h('span', {class: 'sub'}, `to `, time(m.last)))
        : time(m.first);
      const count = `${m.count}${m.count_capped ? '+' : ''} fire${m.count === 1 ? '' : 's'}`;
      return [count, when, '—', '—', badge(m.reason === 'overlap' || m.reason === 'replaced' ||
          m.reason === 'buffer_full' ? 'skipped' : 'missed'), reasonText(m.reason)];
    }
    const t = runTiming(run);
    const end = t.finished || (t.started ? Date.now() : null);
    return [
      h('a', {href: runHref(key.ns, key.id, run.id)}, `run ${run.id}`),
      h('span', {}, time(run.scheduled_time), run.manual ? h('span', {class: 'sub'}, 'triggered by hand') : null),
      t.started ? h('span', {}, time(run.attempts[0].started_at),
          h('span', {class: 'sub'}, `${duration(t.started - t.scheduled)} after scheduled`)) : 'not started',
      t.started ? duration(end - t.started) + (t.finished ? '' : ' so far') : '—',
      badge(run.state),
      [run.attempt > 1 ? `${run.attempt} attempts. ` : '', run.detail],
    ];
  });
  if (rows.length === 0) return h('p', {class: 'muted'}, 'No runs yet.');
  return table('Run history', ['Run', 'Scheduled', 'Started', 'Duration', 'Outcome', 'Detail'], rows,
      {rowClass: (i) => (notRun.includes(i) ? 'not-run' : null)});
}
