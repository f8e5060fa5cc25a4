// The web UI's entry point: finds out who the user is (GET /v1/whoami; a 401
// means the daemon wants a token: the login screen), then shows the page the
// location's hash names. Pages are modules with
//   render(main, params, ctx) -> optional cleanup function
// called when the user leaves the page (to stop streams and timers).
//
// On a standby (docs/cluster.md: a daemon waiting for a shared store's lease)
// a banner names the scheduling node; jobs can be created, changed, paused and
// deleted (the standby writes them to the store, the scheduling node follows),
// and triggered, runs cancelled and retried only if the scheduling node
// advertises a URL the standby forwards them to (ctx.canRun). The role
// is checked again every ROLE_CHECK_MS, and the page drawn again when it
// changes (the standby took over).

import * as api from './api.js';
import {h, replace, errorBox} from './dom.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as run from './run.js';
import * as schedule from './schedule.js';
import * as deadLetters from './dead_letters.js';
import * as overview from './overview.js';
import * as login from './login.js';

const routes = [
  [/^#\/jobs$/, jobs, 'jobs'],
  [/^#\/jobs\/([^/]+)\/([^/]+)$/, job, 'jobs'],
  [/^#\/runs\/([^/]+)\/([^/]+)\/(\d+)$/, run, 'jobs'],
  [/^#\/schedule$/, schedule, 'schedule'],
  [/^#\/dead-letters$/, deadLetters, 'dead-letters'],
  [/^#\/overview$/, overview, 'overview'],
];

const main = document.getElementById('main');
const ROLE_CHECK_MS = 5000;
const ctx = {role: 'read', name: null, canWrite: false, canRun: false, tokens: false, standby: false, node: null, forwards: false,
  scheduler: null};
let roleTimer = null;
let cleanup = null;
// Whether the user is past the login screen (a late 401 then sends them back).
let signedIn = false;

function stopPage() {
  if (cleanup) {
    try {
      cleanup();
    } catch (e) {
      console.error(e);
    }
  }
  cleanup = null;
}

function showWho() {
  const who = document.getElementById('who');
  const parts = [];
  if (ctx.name) parts.push(h('span', {}, `Signed in as ${ctx.name}`));
  parts.push(h('span', {class: 'badge', id: 'role'}, ctx.role === 'read' ? 'read-only' : ctx.role));
  if (ctx.tokens) {
    parts.push(h('button', {class: 'secondary', type: 'button', onclick: logout}, 'Sign out'));
  }
  replace(who, parts);
}

// This node's role: {standby, node, scheduler, forwards} (the scheduling
// node's name, null when none holds the lease or this node schedules; whether
// it advertises a URL, so that this standby forwards triggers, cancels and
// retries to it).
async function readRole() {
  const status = await api.get('/v1/status');
  if (status.role !== 'standby') return {standby: false, node: status.node, scheduler: null, forwards: false};
  const cluster = await api.get('/v1/cluster').catch(() => null);
  return {standby: true, node: status.node, scheduler: cluster?.scheduler?.node ?? null,
    forwards: Boolean(cluster?.scheduler?.url)};
}

function setRole(role) {
  Object.assign(ctx, role);
  ctx.canWrite = ctx.role === 'write' || ctx.role === 'admin';
  ctx.canRun = ctx.canWrite && (!ctx.standby || ctx.forwards);
  const banner = document.getElementById('node-role');
  if (!ctx.standby) {
    replace(banner);
    banner.hidden = true;
    return;
  }
  replace(banner, h('strong', {}, `This node (${ctx.node}) is a standby`),
      '. Changes to jobs made here reach the scheduling node within a second; ',
      !ctx.scheduler ? 'no node schedules right now.'
        : ctx.forwards ? `triggers, cancels and retries made here are carried out by it: ${ctx.scheduler}.`
          : `triggers, cancels and retries are made on it: ${ctx.scheduler}.`);
  banner.hidden = false;
}

async function checkRole() {
  let role;
  try {
    role = await readRole();
  } catch {
    return;  // e.g. the listener restarting as the standby takes over
  }
  const wasStandby = ctx.standby;
  const couldRun = ctx.canRun;
  if (role.standby === wasStandby && role.scheduler === ctx.scheduler && role.forwards === ctx.forwards) return;
  setRole(role);
  showWho();
  if (signedIn && (role.standby !== wasStandby || ctx.canRun !== couldRun)) await route();
}

function logout() {
  api.setToken('');
  showLogin();
}

function showLogin(message) {
  signedIn = false;
  stopPage();
  replace(document.getElementById('who'));
  cleanup = login.render(main, {message, onToken: start});
}

async function route() {
  stopPage();
  const hash = location.hash || '#/jobs';
  for (const [pattern, page, nav] of routes) {
    const m = pattern.exec(hash);
    if (!m) continue;
    for (const a of document.querySelectorAll('nav a')) {
      if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const params = m.slice(1).map(decodeURIComponent);
    replace(main);
    cleanup = page.render(main, params, ctx) || null;
    return;
  }
  replace(main, h('h1', {}, 'Not found'),
      h('p', {}, 'There is no such page. ', h('a', {href: '#/jobs'}, 'See the jobs.')));
}

// Who the caller is; the login screen when the daemon wants a token.
async function start() {
  try {
    const me = await api.get('/v1/whoami');
    ctx.role = me.role;
    ctx.name = me.name;
    ctx.tokens = me.name !== null;
    setRole(await readRole());
  } catch (e) {
    if (e.status === 401) {
      showLogin(api.token() ? 'That token is not accepted by this server. Sign in again.' : '');
    } else {
      replace(main, h('h1', {}, 'chime'), errorBox(e));
    }
    return false;
  }
  signedIn = true;
  showWho();
  if (roleTimer === null) roleTimer = setInterval(checkRole, ROLE_CHECK_MS);
  if (!location.hash) history.replaceState(null, '', '#/jobs');
  await route();
  return true;
}

api.onUnauthorized(() => {
  if (signedIn) showLogin('The server no longer accepts the token. Sign in again.');
});
window.addEventListener('hashchange', () => {
  route();
  main.focus({preventScroll: true});
});
start();
