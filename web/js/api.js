// The REST API (docs/api.md) as the UI calls it: JSON requests with the
// user's bearer token, problem+json errors as ApiError, and streams (a run's
// followed output, the event stream) read with fetch().
//
// The token the user gives on the login screen is kept in sessionStorage
// (this tab only, gone when it closes); the UI never uses cookies, so a page
// of another site cannot make requests with the user's rights.

import {SseParser} from './sse.js';

const TOKEN_KEY = 'chime.token';

export class ApiError extends Error {
  // status: the HTTP status (0 when the daemon could not be reached);
  // message: the problem's detail, which names what was wrong.
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// Called with every 401 (the token is missing, wrong or was removed from the
// daemon's configuration): the app shows the login screen.
let unauthorized = () => {};
export function onUnauthorized(handler) {
  unauthorized = handler;
}

function headers(extra = {}) {
  const h = {...extra};
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

// `path` with the query parameters of `query` that have a value.
export function withQuery(path, query = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    params.append(k, String(v));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

// The error for a failed answer. A 401 to a request sent with the token in
// use now tells the app to ask for a token; one to a request sent before
// the user signed out or in again does not.
async function fail(response, sentToken) {
  const text = await response.text();
  let detail = '';
  try {
    detail = JSON.parse(text).detail || '';
  } catch {
    detail = text.trim();
  }
  if (response.status === 401 && sentToken === token()) unauthorized();
  return new ApiError(response.status, detail || `${response.status} ${response.statusText}`);
}

async function send(url, init) {
  try {
    return await fetch(url, {cache: 'no-store', ...init});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'The daemon could not be reached.');
  }
}

// The JSON answer of `method` `path` (null for 204); ApiError otherwise.
export async function request(method, path, {query, body, ifMatch} = {}) {
  const extra = {};
  if (body !== undefined) extra['Content-Type'] = 'application/json';
  if (ifMatch !== undefined) extra['If-Match'] = ifMatch;
  const sentToken = token();
  const response = await send(withQuery(path, query), {
    method,
    headers: headers(extra),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await fail(response, sentToken);
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path, query) => request('GET', path, {query});
export const post = (path, body) => request('POST', path, {body});

// Reads the text answer of GET `path` as it comes, calling onText(chunk)
// with each decoded piece, until the server ends it or `signal` aborts.
export async function streamText(path, {signal, onText}) {
  const sentToken = token();
  const response = await send(path, {headers: headers(), signal});
  if (!response.ok) throw await fail(response, sentToken);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      onText(value);
    }
  } finally {
    reader.releaseLock();
  }
}

// Reads the server-sent events of GET `path` (the API's /v1/events),
// calling onEvent({type, data, id}) for each, until the stream ends or
// `signal` aborts.
export function streamEvents(path, {signal, onEvent}) {
  const parser = new SseParser(onEvent);
  return streamText(path, {signal, onText: (text) => parser.push(text)});
}

// A job's API path from its name ("ops/backup"; "backup" is in the default
// namespace).
export function jobKey(name) {
  const slash = name.indexOf('/');
  return slash < 0 ? {ns: 'default', id: name} : {ns: name.slice(0, slash), id: name.slice(slash + 1)};
}

export function jobPath({ns, id}) {
  return `/v1/jobs/${encodeURIComponent(ns)}/${encodeURIComponent(id)}`;
}
