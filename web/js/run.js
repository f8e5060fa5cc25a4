// A run's page (#/runs/<namespace>/<id>/<run>): its attempts with timing,
// exit code (or HTTP status) and error, and its output, which streams live
// (GET .../output?follow=true) while the run is going, attempt after
// attempt.

import * as api from './api.js';
import {h, replace, time, duration, badge, table, errorBox, notify, jobHref, runHref} from './dom.js';

const GOING = new Set(['pending', 'running', 'retrying']);
// Attempts a page follows at most (each follow ends with its attempt).
const MAX_FOLLOWS = 50;

export function render(main, [ns, id, runId], ctx) {
  const key = {ns, id};
  const jobName = ns === 'default' ? id : `${ns}/${id}`;
  const runPath = `${api.jobPath(key)}/runs/${runId}`;
  const controller = new AbortController();
  const summary = h('div', {});
  const attempts = h('section', {'aria-labelledby': 'attempts-h'});
  const live = h('p', {id: 'output-state', class: 'muted', 'aria-live': 'polite'});
  // Focusable, so that a keyboard user can scroll it; a region, so that its
  // name is announced (a plain <pre> cannot be named).
  const output = h('pre', {id: 'run-output', class: 'output', tabindex: 0, role: 'region', 'aria-label': 'Output'});
  replace(main,
      h('h1', {}, `Run ${runId} of `, h('a', {href: jobHref(ns, id)}, jobName)),
      summary, attempts,
      h('section', {'aria-labelledby': 'output-h'}, h('h2', {id: 'output-h'}, 'Output'), live, output));

  function show(run) {
    const going = GOING.has(run.state);
    const buttons = [];
    if (ctx.canRun && going) {
      buttons.push(h('button', {type: 'button', class: 'danger', onclick: async () => {
        try {
          await api.post(`${runPath}/cancel`);
          notify(`Asked run ${runId} to stop.`);
        } catch (e) {
          notify(errorBox(e), 'error');
        }
      }}, 'Cancel run'));
    }
    if (ctx.canRun && ['failed', 'cancelled', 'lost'].includes(run.state)) {
      buttons.push(h('button', {type: 'button', onclick: async () => {
        try {
          const made = await api.post(`${runPath}/retry`);
          notify(`Retrying run ${runId}: run ${made.run_id}.`);
          location.hash = runHref(ns, id, made.run_id);
        } catch (e) {
          notify(errorBox(e), 'error');
        }
      }}, 'Retry now'));
    }
    replace(summary,
        h('dl', {class: 'facts'},
            h('dt', {}, 'State'), h('dd', {id: 'run-state'}, badge(run.state)),
            h('dt', {}, 'Fire'), h('dd', {class: 'mono'}, run.fire_id),
            h('dt', {}, 'Scheduled'), h('dd', {}, time(run.scheduled_time), run.manual ? ' (triggered by hand)' : ''),
            h('dt', {}, 'Last change'), h('dd', {}, time(run.updated_at)),
            run.detail ? [h('dt', {}, 'Detail'), h('dd', {}, run.detail)] : null),
        buttons.length ? h('div', {class: 'actions'}, buttons) : null);
    const rows = run.attempts.map((a) => [
      String(a.number),
      time(a.started_at),
      a.finished_at ? time(a.finished_at) : 'still running',
      duration((a.finished_at ? Date.parse(a.finished_at) : Date.now()) - Date.parse(a.started_at)),
      badge(a.outcome),
      a.finished_at ? String(a.exit_code) : '—',
      a.detail || '',
    ]);
    replace(attempts, h('h2', {id: 'attempts-h'}, 'Attempts'),
        rows.length ? table('Attempts', ['#', 'Started', 'Finished', 'Duration', 'Outcome',
          'Exit code or HTTP status', 'Error'], rows) : h('p', {class: 'muted'}, 'No attempt has started yet.'),
        run.attempts.length > 1 ? run.attempts.slice(0, -1).map((a) => h('details', {},
            h('summary', {}, `Output of attempt ${a.number}`),
            h('pre', {class: 'output', tabindex: 0, role: 'region', 'aria-label': `Output of attempt ${a.number}`},
                a.output))) : null);
  }

  function showStored(run) {
    const last = run.attempts[run.attempts.length - 1];
    output.textContent = last ? last.output : '';
    live.textContent = last
      ? `Output of attempt ${last.number}${last.output_truncated ? ' (its first bytes were dropped: the output limit)' : ''}.`
      : 'The run has no output.';
  }

  // Shows the run; while it is going, follows its output until it ends.
  async function follow() {
    for (let i = 0; i < MAX_FOLLOWS && !controller.signal.aborted; ++i) {
      const run = await api.get(runPath);
      show(run);
      if (!GOING.has(run.state)) {
        showStored(run);
        return;
      }
      if (run.state === 'retrying') {
        showStored(run);
        live.textContent = 'Waiting for the next attempt…';
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      live.textContent = 'Following the output as the run writes it…';
      output.textContent = '';
      await api.streamText(`${runPath}/output?follow=true`, {
        signal: controller.signal,
        onText: (text) => {
          const atEnd = output.scrollTop + output.clientHeight >= output.scrollHeight - 4;
          output.append(text);
          if (atEnd) output.scrollTop = output.scrollHeight;
        },
      });
    }
  }

  follow().catch((e) => {
    if (e.name !== 'AbortError') replace(summary, errorBox(e));
  });
  return () => controller.abort();
}
