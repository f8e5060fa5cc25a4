// A list of fire times as the API gives them (GET .../next and the schedule
// preview: {time, local, offset_changed?}), as a table: the browser's time,
// the time in the schedule's zone, and a row for every daylight-saving
// change crossed between two fires.

import {h, time, timeIn, table} from './dom.js';

export function firesTable(caption, fires, zone) {
  if (fires.length === 0) return h('p', {class: 'muted'}, 'The schedule gives no more fire times.');
  const rows = [];
  const dstRows = [];
  fires.forEach((fire, i) => {
    if (fire.offset_changed) {
      const c = fire.offset_changed;
      dstRows.push(rows.length);
      rows.push([
        {content: '', class: 'dst'},
        {content: h('span', {}, `Daylight saving in ${zone}: UTC offset ${c.before} → ${c.after} at `, time(c.at)),
          class: 'dst'},
        '',
      ]);
    }
    rows.push([String(i + 1), time(fire.time), h('span', {title: fire.local}, timeIn(fire.time, zone) || fire.local)]);
  });
  return table(caption, ['#', 'Your time', `In ${zone}`], rows,
      {rowClass: (i) => (dstRows.includes(i) ? 'dst' : null)});
}
