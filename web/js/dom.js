// Small helpers the pages share: building elements, showing times in the
// browser's zone, state badges, notices and the confirmation dialog.

// An element: h('a', {href: '#/jobs', class: 'x', onclick: fn}, 'text', child).
// Children may be strings, nodes, arrays of them, or null/false (skipped).
export function h(tag, props = {}, ...children) {
  const el = tag === 'svg' || props.svg
      ? document.createElementNS('http://www.w3.org/2000/svg', tag)
      : document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false || k === 'svg') continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function svg(tag, props = {}, ...children) {
  return h(tag, {...props, svg: true}, ...children);
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// Replaces the content of `el`.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric',
  hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
});

// An RFC 3339 time in the browser's zone ("Nov 30, 2026, 02:30:00 CET"), in a
// <time> element; "—" for null.
export function time(iso) {
  if (!iso) return '—';
  return h('time', {datetime: iso, title: iso}, localFormat.format(new Date(iso)));
}

// The same time in another IANA zone, as text; "" when the browser does not
// know the zone.
export function timeIn(iso, zone) {
  try {
    return new Intl.DateTimeFormat(undefined, {
      month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
      second: '2-digit', timeZone: zone, timeZoneName: 'short',
    }).format(new Date(iso));
  } catch {
    return '';
  }
}

// "1.2 s", "3 min 4 s", "2 h 5 min".
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function badge(state, text = state) {
  return h('span', {class: `badge state-${state}`}, text);
}

// A table in a sideways-scrolling box: headers, then rows of cells (a cell is
// a node, text, or {content, class}).
export function table(caption, headers, rows, {rowClass} = {}) {
  return h('div', {class: 'table-scroll', role: 'region', 'aria-label': caption, tabindex: 0},
      h('table', {},
          h('caption', {class: 'visually-hidden'}, caption),
          h('thead', {}, h('tr', {}, headers.map((t) => h('th', {scope: 'col'}, t)))),
          h('tbody', {}, rows.map((cells, i) => h('tr', {class: rowClass ? rowClass(i) : null},
              cells.map((c) => (c && c.content !== undefined
                  ? h('td', {class: c.class}, c.content) : h('td', {}, c))))))));
}

export function errorBox(err) {
  return h('div', {class: 'error-box', role: 'alert'}, err.message || String(err));
}

// A short message at the corner of the screen for 8 s (an error for 15 s),
// or until dismissed.
export function notify(content, kind = 'info') {
  const box = document.getElementById('notices');
  const el = h('div', {class: `notice ${kind}`}, content,
      h('button', {type: 'button', class: 'dismiss', 'aria-label': 'Dismiss', onclick: () => el.remove()}, '×'));
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 15000 : 8000);
}

// Asks "message" in a modal dialog; resolves true when confirmed.
export function confirmDialog(message, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = h('dialog', {'aria-labelledby': 'confirm-text'},
        h('p', {id: 'confirm-text'}, message),
        h('div', {class: 'actions'},
            h('button', {class: 'danger', value: 'yes', onclick: () => dialog.close('yes')}, confirmLabel),
            h('button', {class: 'secondary', value: 'no', onclick: () => dialog.close('no')}, 'Cancel')));
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'yes');
    });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('button.secondary').focus();
  });
}

// Buttons to page through an API listing: `cursors` is the stack of the
// cursors of the pages seen (null first), `next` the shown page's
// next_cursor; load() shows the page of the stack's top.
export function pager(cursors, next, load, {newer = 'Previous page', older = 'Next page', status}) {
  return [
    h('button', {type: 'button', class: 'secondary', disabled: cursors.length === 1, onclick: () => {
      cursors.pop();
      load();
    }}, newer),
    h('span', {role: 'status'}, status),
    h('button', {type: 'button', class: 'secondary', disabled: next === null, onclick: () => {
      cursors.push(next);
      load();
    }}, older),
  ];
}

// fn, `ms` after the last of a burst of calls. cancel() drops a call that
// waits.
export function debounce(fn, ms) {
  let timer = 0;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}

// fn at most once every `ms`: a call meanwhile runs once the interval ends.
// cancel() drops a call that waits.
export function throttle(fn, ms) {
  let last = 0;
  let timer = 0;
  const throttled = (...args) => {
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(() => {
      timer = 0;
      last = Date.now();
      fn(...args);
    }, wait);
  };
  throttled.cancel = () => {
    clearTimeout(timer);
    timer = 0;
  };
  return throttled;
}

export function jobHref(ns, id) {
  return `#/jobs/${encodeURIComponent(ns)}/${encodeURIComponent(id)}`;
}

export function runHref(ns, id, run) {
  return `#/runs/${encodeURIComponent(ns)}/${encodeURIComponent(id)}/${run}`;
}

// A labelled input: h('div.field', label, input).
export function field(id, labelText, input, {wide} = {}) {
  input.id = id;
  return h('div', {class: wide ? 'field wide' : 'field'}, h('label', {for: id}, labelText), input);
}
