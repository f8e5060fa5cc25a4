// Unit tests of the UI's pure modules, in Node: the server-sent-event parser
// the live pages depend on (split chunks, comments, multi-line data, CRLF),
// and the caret the schedule editor puts under a parse error's column.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {SseParser} from '../../web/js/sse.js';

function parse(chunks) {
  const events = [];
  const parser = new SseParser((e) => events.push(e));
  for (const c of chunks) parser.push(c);
  return events;
}

test('an event split anywhere across chunks arrives whole', () => {
  const stream = ': chime events\n\nid: 17\nevent: run\ndata: {"job":"ops/report","to":"running"}\n\n';
  for (let cut = 0; cut <= stream.length; ++cut) {
    const events = parse([stream.slice(0, cut), stream.slice(cut)]);
    assert.deepEqual(events, [{type: 'run', data: '{"job":"ops/report","to":"running"}', id: '17'}], `cut at ${cut}`);
  }
});

test('data lines join with newlines, comments are skipped, the id carries over', () => {
  const events = parse(['id: 3\ndata: a\n: heartbeat\ndata:b\n\n', 'data: c\n\n']);
  assert.deepEqual(events, [
    {type: 'message', data: 'a\nb', id: '3'},
    {type: 'message', data: 'c', id: '3'},
  ]);
});

test('CRLF and CR line ends work, also split between chunks', () => {
  assert.deepEqual(parse(['data: x\r', '\n\r', '\n']), [{type: 'message', data: 'x', id: ''}]);
  // A CR at a chunk's end may be half of a CRLF: it counts once the next
  // chunk shows it is not.
  assert.deepEqual(parse(['data: y\r\r']), []);
  assert.deepEqual(parse(['data: y\r\r', ': next']), [{type: 'message', data: 'y', id: ''}]);
});

test('an event without data is not dispatched, and an unfinished one waits', () => {
  assert.deepEqual(parse(['event: run\n\n', 'data: partial\n']), []);
});

test('the schedule editor puts its caret under the column the error names', async () => {
  // schedule.js touches the DOM only when rendered; caretFor is pure.
  const {caretFor} = await import('../../web/js/schedule.js');
  assert.equal(caretFor('expression: day-of-month: 32 is outside 1-31 (field 3, column 5)'), '    ^');
  assert.equal(caretFor('expression: column 1: unexpected'), '^');
  assert.equal(caretFor('zone: unknown time zone "Mars/Base"'), null);
});
