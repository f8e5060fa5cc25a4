// An accessibility audit of the web UI with axe-core: the real daemon
// (CHIME_BINARY) with a few jobs (one whose runs fail and become dead
// letters, one whose fires are skipped by its overlap policy), the UI in
// headless Chromium, and axe's WCAG 2.0 / 2.1 A and AA rules run on every
// page in the states a user sees: the login screen (and its refusal), the
// jobs list (with the new-job form, a notice and the delete confirmation),
// a job's page with its history and with daylight-saving changes, a failed
// run, the schedule editor with a bad expression and a good one, the dead
// letters and the overview; the jobs list for a read-only user; the jobs
// list and a job's page on a 375 px wide screen. Each audit runs in the
// light and the dark colour scheme (style.css follows
// prefers-color-scheme). Any violation fails the test, listed with its
// rule, impact, help and the elements it was found on; what axe could not
// decide ("incomplete": to check by hand) is printed as a diagnostic.
//
//   CHIME_BINARY=build/test/cli/chime CHIME_WEB_ARTIFACTS=/tmp/shots \
//   CHIME_WEB_NODE_MODULES=build/test/tests/web/node_modules node --test tests/web/a11y_e2e.test.mjs

import {describe, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {startDaemon, apiCall, TOKENS} from './daemon.mjs';
import {BINARY, ARTIFACTS, requirePackage, opsJobs, until, launchBrowser, openPage, go, signIn,
  stepsWithShots} from './support.mjs';

const axe = requirePackage('axe-core');

const RULES = {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}};
const SCHEMES = ['light', 'dark'];
// The pages refresh themselves (the jobs list and the overview every 10 s):
// an audit that a refresh overlapped is run again, at most this many times.
const AUDIT_TRIES = 3;

let daemon;
let browser;
let page;
let deadRun;
const step = stepsWithShots('a11y-failed', () => page);

// axe's findings on the page as it is now: {violations, incomplete}, each a
// list of {id, impact, help, nodes: [{target, summary}]}.
async function axeRun() {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axe.source);
  for (let tries = 1; ; ++tries) {
    const {changed, ...found} = await page.evaluate(async (options) => {
      let changed = false;
      const observer = new MutationObserver(() => {
        changed = true;
      });
      observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
      const result = await window.axe.run(document, options);
      if (observer.takeRecords().length) changed = true;
      observer.disconnect();
      const brief = (rule) => ({id: rule.id, impact: rule.impact, help: rule.help,
        nodes: rule.nodes.map((n) => ({target: n.target.join(' '),
          summary: (n.failureSummary || '').replace(/\s+/g, ' ').trim()}))});
      return {changed, violations: result.violations.map(brief), incomplete: result.incomplete.map(brief)};
    }, RULES);
    if (!changed || tries === AUDIT_TRIES) return {...found, tries};
  }
}

const describeRule = (where, rule) => `${where}: ${rule.id} (${rule.impact}): ${rule.help}\n` +
    rule.nodes.map((n) => `    ${n.target}${n.summary ? `\n      ${n.summary}` : ''}`).join('\n');

// One line: what axe could not decide, and why.
const describeUndecided = (where, rule) => `${where}: ${rule.id}: ${rule.nodes.length} element(s) (` +
    `${rule.nodes.slice(0, 3).map((n) => n.target).join(', ')}${rule.nodes.length > 3 ? ', ...' : ''}): ` +
    [...new Set(rule.nodes.map((n) => n.summary.replace(/^Fix (any|all) of the following: /, '')))].join(' / ');

// Audits the page as it is in each colour scheme; fails listing every
// violation. `t` is the test's context (for the diagnostics).
async function expectNoViolations(t, what) {
  const report = [];
  try {
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({colorScheme});
      const {violations, incomplete, tries} = await axeRun();
      const where = `${what} (${colorScheme})`;
      report.push(...violations.map((rule) => describeRule(where, rule)));
      for (const rule of incomplete) t.diagnostic(`to check by hand: ${describeUndecided(where, rule)}`);
      if (tries > 1) t.diagnostic(`${where}: audited ${tries} times (the page changed during an audit)`);
    }
  } finally {
    await page.emulateMedia({colorScheme: 'light'});
  }
  if (report.length) assert.fail(`axe found ${report.length} violation(s):\n${report.join('\n')}`);
}

const rows = (selector) => page.locator(`${selector} tbody tr`);

describe('web UI accessibility (axe-core)', {timeout: 240000}, () => {
  before(async () => {
    assert.ok(BINARY, 'CHIME_BINARY names the chime binary');
    mkdirSync(ARTIFACTS, {recursive: true});
    // busy fires for a few seconds only, so that its history is still when
    // the pages are audited.
    const busyEnd = new Date(Date.now() + 10000).toISOString().replace(/\.\d+Z$/, 'Z');
    daemon = await startDaemon(BINARY, {'ops.yaml': opsJobs({busyEnd})}, join(ARTIFACTS, 'daemon-a11y.log'));
    // An API job (so the list has Pause and Delete buttons), paused.
    await apiCall(daemon.url, 'POST', '/v1/jobs', {id: 'hook', namespace: 'web', schedule: '0 0 1 1 *',
      http: {url: 'http://127.0.0.1:1/never'}});
    await apiCall(daemon.url, 'POST', '/v1/jobs/web/hook/pause');
    deadRun = (await apiCall(daemon.url, 'POST', '/v1/jobs/ops/flaky/trigger')).run_id;
    await until('the dead letter', async () =>
      (await apiCall(daemon.url, 'GET', '/v1/dead-letters')).runs.some((r) => r.id === deadRun), 30000);
    await until('busy\'s fires to end, some skipped', async () => {
      const job = await apiCall(daemon.url, 'GET', '/v1/jobs/ops/busy');
      const {runs} = await apiCall(daemon.url, 'GET', '/v1/jobs/ops/busy/runs');
      const {missed} = await apiCall(daemon.url, 'GET', '/v1/jobs/ops/busy/missed');
      return job.status.next_fire_time === null && runs.length > 0 &&
          runs.every((r) => !['pending', 'running', 'retrying'].includes(r.state)) &&
          missed.some((m) => m.reason === 'overlap');
    }, 40000);
    browser = await launchBrowser();
    page = await openPage(browser);
  });

  after(async () => {
    if (browser) await browser.close();
    if (daemon) await daemon.stop();
  });

  step('the login screen, and its refusal of a wrong token', async (t) => {
    await page.goto(daemon.url + '/');
    await page.getByLabel('API token').waitFor();
    await expectNoViolations(t, 'login');
    await signIn(page, 'not-a-token');
    await page.getByText('not accepted').waitFor();
    await expectNoViolations(t, 'login refused');
    await signIn(page, TOKENS.admin);
    await page.getByRole('heading', {name: 'Jobs'}).waitFor();
  });

  step('the jobs list, with a notice', async (t) => {
    await until('the four jobs', async () => (await rows('#jobs-results').count()) === 4);
    await expectNoViolations(t, 'jobs');
    await page.getByRole('button', {name: 'Trigger now: ops/monthly'}).click();
    await page.locator('.notice', {hasText: 'Triggered ops/monthly'}).waitFor();
    await expectNoViolations(t, 'jobs with a notice');
  });

  step('the new-job form and the delete confirmation', async (t) => {
    await page.getByRole('button', {name: 'New job'}).click();
    await page.getByLabel('Job definition (JSON)').waitFor();
    await expectNoViolations(t, 'new job');
    await page.getByRole('button', {name: 'Cancel'}).click();
    await page.getByRole('button', {name: 'Delete web/hook'}).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await expectNoViolations(t, 'delete confirmation');
    await dialog.getByRole('button', {name: 'Cancel'}).click();
  });

  step('a job\'s page with its runs and skipped fires', async (t) => {
    await go(page, '#/jobs/ops/busy');
    const history = page.locator('section[aria-labelledby="history-h"]');
    await history.locator('svg.chart').waitFor();
    await history.locator('tr.not-run').first().waitFor();
    await expectNoViolations(t, 'job ops/busy');
  });

  step('a job\'s page with daylight-saving changes among its next fires', async (t) => {
    await go(page, '#/jobs/ops/monthly');
    await page.locator('section[aria-labelledby="next-h"] tr.dst').first().waitFor();
    await page.locator('#managed-by').waitFor();
    await expectNoViolations(t, 'job ops/monthly');
  });

  step('a failed run with its attempts and output', async (t) => {
    await go(page, `#/runs/ops/flaky/${deadRun}`);
    await until('two attempts', async () => (await rows('section[aria-labelledby="attempts-h"]').count()) === 2);
    await page.getByText('Output of attempt 1').click();  // the first attempt's output, opened
    await until('the output', async () => /boom/.test(await page.locator('#run-output').innerText()));
    await expectNoViolations(t, `run ${deadRun} of ops/flaky`);
  });

  step('the schedule editor with a bad expression and a good one', async (t) => {
    await go(page, '#/schedule');
    const expression = page.getByLabel('Expression');
    await expression.fill('0 0 32 * *');
    await page.locator('#schedule-error pre.caret').waitFor();
    await expectNoViolations(t, 'schedule editor, bad expression');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await expression.fill('0 12 1 * *');
    await page.locator('#schedule-result tr.dst').first().waitFor();
    await expectNoViolations(t, 'schedule editor');
  });

  step('the dead letters', async (t) => {
    await go(page, '#/dead-letters');
    await page.getByRole('button', {name: `Retry now: run ${deadRun} of ops/flaky`}).waitFor();
    await expectNoViolations(t, 'dead letters');
  });

  step('the overview', async (t) => {
    await go(page, '#/overview');
    await page.locator('section[aria-labelledby="rpm-h"] svg.chart').waitFor();
    await page.getByText('As a table').click();
    await page.locator('section[aria-labelledby="rpm-h"] tbody tr').first().waitFor();
    await page.getByText('Median lag').waitFor();
    await expectNoViolations(t, 'overview');
  });

  step('a narrow screen (375 px): the jobs list and a job\'s page', async (t) => {
    await page.setViewportSize({width: 375, height: 812});
    try {
      await go(page, '#/jobs');
      await until('the four jobs', async () => (await rows('#jobs-results').count()) === 4);
      await expectNoViolations(t, 'jobs, 375 px');
      await go(page, '#/jobs/ops/busy');
      await page.locator('section[aria-labelledby="history-h"] tr.not-run').first().waitFor();
      await expectNoViolations(t, 'job ops/busy, 375 px');
    } finally {
      await page.setViewportSize({width: 1280, height: 900});
    }
  });

  step('the jobs list for a read-only user', async (t) => {
    await go(page, '#/jobs');
    await page.getByRole('button', {name: 'Sign out'}).click();
    await signIn(page, TOKENS.reader);
    await page.getByRole('heading', {name: 'Jobs'}).waitFor();
    await until('the four jobs', async () => (await rows('#jobs-results').count()) === 4);
    assert.equal(await page.locator('#role').innerText(), 'read-only');
    await expectNoViolations(t, 'jobs, read-only');
  });
});
