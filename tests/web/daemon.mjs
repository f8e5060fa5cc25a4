// Test support for the web UI's end-to-end tests: runs the real `chime serve`
// (the built binary) on 127.0.0.1 with a fresh data directory, a jobs
// directory and API tokens, and kills it at the end, even when a test fails
// or the process is interrupted.

import {spawn} from 'node:child_process';
import {mkdtempSync, mkdirSync, writeFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

export const TOKENS = {
  admin: 'ui-admin-0123456789abcdef',
  reader: 'ui-reader-0123456789abcdef',
};

const running = new Set();
function killAll() {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

// Starts the daemon at `binary` with `jobs` (file name -> YAML) in its jobs
// directory, the TOKENS unless `tokens` is false, and `args` after its own.
// Resolves once it serves HTTP (at most 30 s; it logs "chime serving", or as
// a standby on a shared store "standby serving ..."), with {url, stop(),
// kill(), logText()}; stop() ends it (SIGTERM, SIGKILL after 10 s), writes its
// log to `logPath` and removes its directory; kill() is `kill -9`.
export async function startDaemon(binary, jobs, logPath, {tokens = true, args = []} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'chime-web-'));
  mkdirSync(join(dir, 'jobs'));
  for (const [name, yaml] of Object.entries(jobs)) writeFileSync(join(dir, 'jobs', name), yaml);
  writeFileSync(join(dir, 'chime.yaml'), !tokens ? '{}\n' : `api_tokens:
  - name: ui-admin
    role: admin
    token: ${TOKENS.admin}
  - name: ui-reader
    role: read
    token: ${TOKENS.reader}
`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CHIME_')));
  const child = spawn(binary, ['serve', '--data-dir', join(dir, 'data'), '--jobs-dir', join(dir, 'jobs'),
    '--listen', '127.0.0.1:0', '--config', join(dir, 'chime.yaml'), '--log-format', 'json', ...args],
  {env, stdio: ['ignore', 'ignore', 'pipe']});
  running.add(child);
  let log = '';
  const logText = () => log;
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the daemon did not start in 30 s; its log:\n${log}`)), 30000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => {
      log += text;
      for (const line of log.split('\n')) {
        let record;
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        if (record.msg === 'chime serving') {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${record.listen.slice(record.listen.lastIndexOf(':') + 1)}`);
        } else if (record.msg.startsWith('standby serving')) {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${record.port}`);
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited (${code}) before serving; its log:\n${log}`));
    });
  });
  const finish = (resolve) => {
    running.delete(child);
    if (logPath) writeFileSync(logPath, log);
    rmSync(dir, {recursive: true, force: true});
    resolve();
  };
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      finish(resolve);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.on('exit', () => {
      clearTimeout(timer);
      finish(resolve);
    });
    child.kill('SIGTERM');
  });
  const kill = () => child.kill('SIGKILL');
  return {url, stop, kill, logText};
}

// JSON from the API, with the admin token: for a test's own checks and set-up.
export async function apiCall(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: {
      Authorization: `Bearer ${TOKENS.admin}`,
      ...(body === undefined ? {} : {'Content-Type': 'application/json'}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
