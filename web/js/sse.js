// A parser of server-sent events (text/event-stream, as the HTML standard
// defines it) for streams read with fetch(): EventSource cannot send the
// Authorization header the API needs.
//
//   const parser = new SseParser((event) => console.log(event.type, event.data));
//   parser.push(textChunk);  // as often as text arrives, split anywhere
//
// Each dispatched event is {type, data, id}: type "message" unless an
// `event:` field named it, data the `data:` lines joined by "\n", id the
// last `id:` seen (kept across events, as the standard says). Comment lines
// (": heartbeat") and `retry:` are ignored.

export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = '';
    this.data = [];
    this.type = '';
    this.lastId = '';
  }

  // Feeds decoded text; dispatches every event it completes.
  push(text) {
    this.buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (m === null) return;
      // A lone "\r" at the very end may be the first half of "\r\n".
      if (m[0] === '\r' && m.index === this.buffer.length - 1) return;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
  }

  dispatch() {
    if (this.data.length > 0) {
      this.onEvent({type: this.type || 'message', data: this.data.join('\n'), id: this.lastId});
    }
    this.data = [];
    this.type = '';
  }
}
