// The operations on a job, as buttons for users whose role allows them
// (none for read-only users): trigger now, pause or resume, delete (after a
// confirmation). A job a job file defines can only be triggered here: it is
// changed in its file. A standby offers no trigger (the scheduling node's).

import * as api from './api.js';
import {h, notify, confirmDialog, runHref, errorBox} from './dom.js';

// `job` as the API shows it; onChange() is called after a change (to
// reload), onDeleted() after a delete.
export function jobActions(job, ctx, {onChange, onDeleted}) {
  if (!ctx.canWrite) return null;
  const key = api.jobKey(job.name);
  const path = api.jobPath(key);
  const fromFile = job.status.managed_by === 'file';
  const run = (label, fn) => async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    try {
      await fn();
    } catch (err) {
      notify(errorBox(err), 'error');
    } finally {
      button.disabled = false;
    }
  };
  const buttons = [];
  if (ctx.canRun) {
    buttons.push(h('button', {type: 'button', 'aria-label': `Trigger now: ${job.name}`, onclick: run('trigger', async () => {
      const made = await api.post(`${path}/trigger`);
      notify(h('span', {}, `Triggered ${job.name}: `,
          h('a', {href: runHref(key.ns, key.id, made.run_id)}, `run ${made.run_id}`)));
      onChange();
    })}, 'Trigger now'));
  }
  if (!fromFile) {
    const paused = job.status.paused;
    buttons.push(h('button', {type: 'button', class: 'secondary',
      'aria-label': `${paused ? 'Resume' : 'Pause'} ${job.name}`,
      onclick: run('pause', async () => {
        await api.post(`${path}/${paused ? 'resume' : 'pause'}`);
        notify(`${paused ? 'Resumed' : 'Paused'} ${job.name}.`);
        onChange();
      })}, paused ? 'Resume' : 'Pause'));
    buttons.push(h('button', {type: 'button', class: 'danger', 'aria-label': `Delete ${job.name}`,
      onclick: run('delete', async () => {
        if (!(await confirmDialog(`Delete the job ${job.name}? Its run history stays.`, 'Delete'))) return;
        await api.request('DELETE', path, {ifMatch: `"${job.status.revision}"`});
        notify(`Deleted ${job.name}.`);
        onDeleted();
      })}, 'Delete'));
  }
  return buttons.length ? h('div', {class: 'actions'}, buttons) : null;
}
