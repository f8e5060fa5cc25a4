// A real PostgreSQL 15 server for the web UI's tests of a cluster
// (standby_e2e): tests/chaos/cluster.py starts it in a temporary directory on
// 127.0.0.1 and stops it when its stdin closes -- when stop() is called, or
// when this process ends however it ends.

import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';

const CLUSTER_PY = fileURLToPath(new URL('../chaos/cluster.py', import.meta.url));

// Resolves with {url, stop()} once the server answers (at most 90 s).
export async function startPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'chime-web-pg-'));
  const child = spawn('python3', [CLUSTER_PY, 'postgres', dir], {stdio: ['pipe', 'pipe', 'pipe']});
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    err += text;
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`PostgreSQL did not start in 90 s:\n${err}`)), 90000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      out += text;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).url);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL's harness exited (${code}):\n${err}`));
    });
  });
  const stop = () => new Promise((resolve) => {
    const done = () => {
      rmSync(dir, {recursive: true, force: true});
      resolve();
    };
    if (child.exitCode !== null || child.signalCode !== null) {
      done();
      return;
    }
    child.on('exit', done);
    child.stdin.end();
  });
  return {url, stop};
}
