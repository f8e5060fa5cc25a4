// What the web UI's end-to-end tests (ui_e2e.test.mjs, a11y_e2e.test.mjs)
// share: where the binary, the browser, the npm packages and the artifacts
// are (the environment tests/web/CMakeLists.txt sets), the job file both
// start the daemon with, a bounded wait, and helpers to drive a page.
// daemon.mjs starts and stops the daemon itself.

import {it} from 'node:test';
import assert from 'node:assert/strict';
import {createRequire} from 'node:module';
import {join, resolve} from 'node:path';

// require() of the packages in package.json, as `npm ci` installed them
// (into CHIME_WEB_NODE_MODULES; ./node_modules when it is not set).
export const requirePackage =
    createRequire(resolve(process.env.CHIME_WEB_NODE_MODULES || 'node_modules', 'resolve.js'));
const {chromium} = requirePackage('playwright-core');

export const WAIT = 20000;
export const BINARY = process.env.CHIME_BINARY;
export const ARTIFACTS = process.env.CHIME_WEB_ARTIFACTS || 'web-artifacts';
const CHROMIUM = process.env.CHIME_CHROMIUM || '/usr/bin/chromium';

// Three jobs in namespace "ops": `monthly` (in Europe/Berlin, so its next
// fires cross daylight-saving changes), `flaky` (never fires by itself;
// triggered, it fails twice and becomes a dead letter) and `busy` (every
// second a run of 2 s, so every other fire is skipped by the overlap
// policy). With `busyEnd` (RFC 3339) busy fires no more after that time.
export function opsJobs({busyEnd} = {}) {
  return `jobs:
  - id: monthly
    namespace: ops
    schedule: "0 3 1 * *"
    zone: Europe/Berlin
    shell: { command: "echo monthly" }
  - id: flaky
    namespace: ops
    schedule: "0 0 1 1 *"
    retry: { max_attempts: 2, initial_backoff: 1s }
    shell: { command: "echo boom; exit 7" }
  - id: busy
    namespace: ops
    schedule: "@every 1s"
    overlap: skip
    shell: { command: "sleep 2" }
${busyEnd ? `    end: "${busyEnd}"\n` : ''}`;
}

// Polls until fn() returns a truthy value (its value), or fails after
// `limit` ms saying what it waited for.
export async function until(what, fn, limit = WAIT) {
  const deadline = Date.now() + limit;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`waited ${limit} ms for ${what}; last: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function launchBrowser() {
  return chromium.launch({executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true});
}

// A page 1280 px wide whose every wait is bounded by WAIT. The browser's
// zone differs from the jobs' (UTC, Europe/Berlin): times are shown in the
// user's zone.
export async function openPage(browser) {
  const page = await browser.newPage({viewport: {width: 1280, height: 900}, locale: 'en-US',
    timezoneId: 'America/New_York'});
  page.setDefaultTimeout(WAIT);
  return page;
}

// Shows the UI page of `hash` (the UI is one document: no reload).
export async function go(page, hash) {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

// Signs in on the login screen with `token` (refused or not).
export async function signIn(page, token) {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', {name: 'Sign in'}).click();
}

// it(), with a screenshot of page() when it fails; fn gets the test's context (<prefix>-<n>.png in
// ARTIFACTS).
export function stepsWithShots(prefix, page) {
  let failures = 0;
  return (name, fn) => it(name, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      await page().screenshot({path: join(ARTIFACTS, `${prefix}-${++failures}.png`), fullPage: true}).catch(() => {});
      throw e;
    }
  });
}
