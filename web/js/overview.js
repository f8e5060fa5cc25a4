// The overview (#/overview): the daemon's counts (GET /v1/status), runs per
// minute by outcome over the last 30 minutes, the schedule lag of the newest
// runs (how long after its scheduled time each started), and the runs going
// now. Refreshed every 10 s.
//
// Runs per minute come from GET /v1/runs/per-minute; the lag needs each
// run's first attempt, read for the newest LAG_SAMPLE runs that started.

import * as api from './api.js';
import {h, svg, replace, time, duration, badge, table, errorBox, jobHref, runHref} from './dom.js';

const MINUTES = 30;
const LAG_SAMPLE = 20;
const OUTCOMES = ['succeeded', 'failed', 'other', 'running'];

// "going": pending, running or waiting to retry.
const outcomeLabel = (o) => (o === 'running' ? 'going' : o);

// The chart's buckets from GET /v1/runs/per-minute, oldest first.
function buckets(perMinute) {
  return perMinute.minutes.map((m) => ({
    start: Date.parse(m.minute),
    succeeded: m.succeeded,
    failed: m.failed + m.lost,
    other: m.cancelled,
    running: m.pending + m.running + m.retrying,
  }));
}

function perMinuteChart(perMinute) {
  const bars = buckets(perMinute);
  const max = Math.max(1, ...bars.map((b) => OUTCOMES.reduce((s, o) => s + b[o], 0)));
  const width = 800;
  const height = 180;
  const barW = (width - 40) / bars.length;
  const label = (b) => new Date(b.start).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'});
  const rects = bars.map((b, i) => {
    let y = height - 20;
    return OUTCOMES.map((o) => {
      const hgt = (b[o] / max) * (height - 40);
      y -= hgt;
      return b[o] ? svg('rect', {x: 40 + i * barW + 1, y, width: barW - 2, height: hgt, class: `bar-${o}`},
          svg('title', {}, `${label(b)}: ${b[o]} ${o}`)) : null;
    });
  });
  const rows = bars.filter((b) => OUTCOMES.some((o) => b[o] > 0))
      .map((b) => [label(b), ...OUTCOMES.map((o) => ({content: String(b[o]), class: 'num'}))]);
  return h('div', {},
      svg('svg', {class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img',
        'aria-label': `Runs per minute by outcome over the last ${bars.length} minutes; at most ${max} in a minute`},
      svg('line', {x1: 40, x2: width, y1: height - 20, y2: height - 20, class: 'axis'}),
      svg('text', {x: 0, y: 25}, String(max)),
      svg('text', {x: 0, y: height - 22}, '0'),
      svg('text', {x: 40, y: height - 5}, `${bars.length} min ago`),
      svg('text', {x: width, y: height - 5, 'text-anchor': 'end'}, 'now'),
      rects),
      h('div', {class: 'legend'}, OUTCOMES.map((o) => h('span', {}, h('span', {class: `swatch ${o}`}),
          outcomeLabel(o)))),
      h('details', {}, h('summary', {}, 'As a table'),
          rows.length ? table('Runs per minute', ['Minute', ...OUTCOMES.map(outcomeLabel)], rows) : h('p', {}, 'No runs.')));
}

// How long after its scheduled time each of the newest LAG_SAMPLE runs
// that started did start (each run read for its first attempt).
async function lagSection() {
  const recent = await api.get('/v1/runs', {limit: 100});
  const started = recent.runs.filter((r) => r.state !== 'pending').slice(0, LAG_SAMPLE);
  const details = await Promise.all(started.map((r) => api.get(r.run)));
  const lags = details.filter((d) => d.attempts.length > 0)
      .map((d) => Date.parse(d.attempts[0].started_at) - Date.parse(d.scheduled_time));
  if (lags.length === 0) return h('p', {class: 'muted'}, 'No run has started yet.');
  lags.sort((a, b) => a - b);
  return h('div', {class: 'cards'},
      card('Median lag', duration(lags[Math.floor(lags.length / 2)])),
      card('Largest lag', duration(lags[lags.length - 1])),
      card('Runs sampled', String(lags.length)));
}

function card(label, value, valueClass = 'value') {
  return h('div', {class: 'card'}, h('div', {class: 'muted'}, label), h('div', {class: valueClass}, value));
}

// The scheduler's counts (GET /v1/status "scheduler").
function schedulerCards(s) {
  const notRun = Object.values(s.fires_not_run).reduce((a, b) => a + b, 0);
  return [card('Jobs', `${s.jobs}`), card('Paused', `${s.jobs_paused}`),
    card('Running', `${s.runs_running}`), card('Pending', `${s.runs_pending}`),
    card('Fires run', `${s.fires_run}`), card('Fires not run', `${notRun}`),
    card('Runs failed', `${s.runs_failed}`)];
}

// A standby counts nothing itself (docs/cluster.md): its role, who
// schedules, and the store's jobs by namespace.
async function standbyCards() {
  const [cluster, namespaces] = await Promise.all([api.get('/v1/cluster'), api.get('/v1/namespaces')]);
  const sum = (key) => namespaces.namespaces.reduce((a, n) => a + n[key], 0);
  return [card('Role', 'standby'), card('Scheduling node', cluster.scheduler ? cluster.scheduler.node : 'none'),
    card('Live nodes', `${cluster.members.length}`),
    card('Jobs', `${sum('jobs')}`), card('Paused', `${sum('paused')}`)];
}

export function render(main) {
  const cards = h('section', {'aria-labelledby': 'counts-h'});
  const chart = h('section', {'aria-labelledby': 'rpm-h'});
  const lag = h('section', {'aria-labelledby': 'lag-h'});
  const going = h('section', {'aria-labelledby': 'going-h'});
  replace(main, h('h1', {}, 'Overview'), cards, chart, lag, going);
  let stopped = false;

  async function load() {
    try {
      const status = await api.get('/v1/status');
      replace(cards, h('h2', {id: 'counts-h'}, 'Now'),
          h('div', {class: 'cards'}, ...(status.scheduler ? schedulerCards(status.scheduler) : await standbyCards()),
              card('Up since', time(status.started_at), 'value small')),
          status.job_file_errors.length
            ? h('div', {class: 'error-box'}, 'Job files that do not load: ', status.job_file_errors.join('; '))
            : null);
      const perMinute = await api.get('/v1/runs/per-minute', {minutes: MINUTES});
      if (stopped) return;
      replace(chart, h('h2', {id: 'rpm-h'}, 'Runs per minute, by outcome'),
          perMinute.capped ? h('p', {class: 'muted'},
              `Counted from the newest ${perMinute.runs_counted} runs only: the oldest minutes are short.`) : null,
          perMinuteChart(perMinute));
      replace(lag, h('h2', {id: 'lag-h'}, 'Schedule lag (start after the scheduled time)'), await lagSection());
      const running = await api.get('/v1/runs', {state: 'running', limit: 100});
      replace(going, h('h2', {id: 'going-h'}, 'Running now'),
          running.runs.length === 0 ? h('p', {class: 'muted'}, 'Nothing is running.')
            : table('Running now', ['Job', 'Run', 'Scheduled', 'State'], running.runs.map((r) => {
              const key = api.jobKey(r.job);
              return [h('a', {href: jobHref(key.ns, key.id)}, r.job),
                h('a', {href: runHref(key.ns, key.id, r.id)}, `run ${r.id}`), time(r.scheduled_time), badge(r.state)];
            })));
    } catch (e) {
      if (!stopped) replace(cards, errorBox(e));
    }
  }
  load();
  const timer = setInterval(load, 10000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
