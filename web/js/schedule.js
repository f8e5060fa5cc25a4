// The schedule editor (#/schedule): an expression and a zone in, the
// server's English description and the next fire times out as the user
// types (GET /v1/schedule/preview), daylight-saving changes marked; a parse
// error is shown with a caret under the column it names.

import * as api from './api.js';
import {h, replace, errorBox, debounce, field} from './dom.js';
import {firesTable} from './fires.js';

const COUNT = 10;

function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

// The caret line under `expression` for a parser message naming a column
// ("... (field 3, column 7)"; columns count from 1), or null.
export function caretFor(message) {
  const m = /column (\d+)/.exec(message);
  if (!m) return null;
  return `${' '.repeat(Math.max(0, Number(m[1]) - 1))}^`;
}

export function render(main) {
  const expression = h('input', {type: 'text', value: '30 2 * * *', spellcheck: 'false',
    autocomplete: 'off', class: 'mono', 'aria-describedby': 'schedule-help schedule-error'});
  const zone = h('input', {type: 'text', value: browserZone(), list: 'zones', autocomplete: 'off'});
  const zones = h('datalist', {id: 'zones'},
      (Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : ['UTC']).map((z) => h('option', {value: z})));
  const errorRegion = h('div', {id: 'schedule-error', role: 'alert'});
  const result = h('div', {id: 'schedule-result', 'aria-live': 'polite'});
  let generation = 0;

  async function preview() {
    const mine = ++generation;
    const expr = expression.value;
    if (expr.trim() === '') {
      replace(errorRegion);
      replace(result, h('p', {class: 'muted'}, 'Type a schedule expression.'));
      return;
    }
    try {
      const body = await api.get('/v1/schedule/preview', {expression: expr, zone: zone.value.trim(), count: COUNT});
      if (mine !== generation) return;
      expression.removeAttribute('aria-invalid');
      zone.removeAttribute('aria-invalid');
      replace(errorRegion);
      replace(result,
          h('p', {id: 'schedule-description', class: 'banner'}, body.description),
          h('h2', {}, `Next ${COUNT} fire times`),
          firesTable('Next fire times', body.next, body.zone));
    } catch (e) {
      if (mine !== generation) return;
      const onZone = e.message.startsWith('zone:');
      (onZone ? zone : expression).setAttribute('aria-invalid', 'true');
      const caret = onZone ? null : caretFor(e.message);
      replace(errorRegion, h('div', {class: 'error-box', id: 'schedule-error-text'}, e.message),
          caret ? h('pre', {class: 'caret', 'aria-hidden': 'true'}, `${expr}\n${caret}`) : null);
      replace(result);
    }
  }
  const onInput = debounce(preview, 200);
  expression.addEventListener('input', onInput);
  zone.addEventListener('input', onInput);

  replace(main,
      h('h1', {}, 'Schedule editor'),
      h('p', {id: 'schedule-help', class: 'muted'},
          'A cron expression (five fields, or six with seconds), a macro such as @daily, or @every 10m. ',
          'Times are computed by the daemon, in the zone you give.'),
      h('form', {class: 'editor-fields', onsubmit: (e) => {
        e.preventDefault();
        preview();
      }},
      field('schedule-expression', 'Expression', expression, {wide: true}),
      field('schedule-zone', 'Time zone', zone),
      zones),
      errorRegion, result);
  preview();
  expression.focus();
  return () => onInput.cancel();
}
