// End-to-end tests of the web UI: the real daemon (CHIME_BINARY) on
// 127.0.0.1, the UI it serves at /, driven in headless Chromium
// (/usr/bin/chromium) with playwright-core. Each flow a user relies on:
// signing in, creating a job and seeing it listed, triggering it and
// watching its output stream, a failed run with its retries and the dead
// letters, pausing and resuming, editing a definition, deleting with
// confirmation, the job page
// (definition, next fire times with daylight saving, history with skipped
// fires), the schedule editor's errors, the overview, and a read-only user
// who sees no write buttons. Screenshots of every page go to
// CHIME_WEB_ARTIFACTS.
//
// Every wait is bounded (WAIT, or the test runner's timeout); the daemon and
// the browser are stopped at the end whatever happens.
//
//   CHIME_BINARY=build/test/cli/chime CHIME_WEB_ARTIFACTS=/tmp/shots \
//   CHIME_WEB_NODE_MODULES=build/test/tests/web/node_modules node --test tests/web/

import {describe, it, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {startDaemon, apiCall, TOKENS} from './daemon.mjs';
import {WAIT, BINARY, ARTIFACTS, opsJobs, until, launchBrowser, openPage, go as goTo, signIn as signInWith,
  stepsWithShots} from './support.mjs';

// 120 jobs in namespace "bulk" to page through (they never fire).
const BULK = `jobs:\n${Array.from({length: 120}, (_, i) => `  - id: job-${String(i).padStart(3, '0')}
    namespace: bulk
    schedule: "0 0 1 1 *"
    http: { url: "http://127.0.0.1:1/never" }
`).join('')}`;

// `ops/busy` ends 12 s after the start: its history then shows both why
// fires were skipped and that it ended.
const BUSY_END = new Date(Date.now() + 12000).toISOString().replace(/\.\d+Z$/, 'Z');

const JOBS = {
  'bulk.yaml': BULK,
  'ops.yaml': opsJobs({busyEnd: BUSY_END}),
};

let daemon;
let browser;
let page;
const problems = [];
// Paths whose 400 answers a test provokes on purpose (a bad expression, a bad
// definition): the browser logs them, and they are no fault.
const provoked400 = [];

const text = (selector) => page.locator(selector).innerText();

// A screenshot of the whole page, without the notices in its corner.
async function shot(name) {
  await page.evaluate(() => document.getElementById('notices').replaceChildren());
  await page.screenshot({path: join(ARTIFACTS, `${name}.png`), fullPage: true});
}

const go = (hash) => goTo(page, hash);
const signIn = (token) => signInWith(page, token);

async function jobsRow(search, name) {
  await go('#/jobs');
  await page.getByLabel('Search').fill(search);
  const row = page.locator('#jobs-results tbody tr', {has: page.getByRole('link', {name, exact: true})});
  // The filtered page has come when the row is the only one.
  await until(`${name} alone in the list`, async () => (await page.locator('#jobs-results tbody tr').count()) === 1 &&
      (await row.count()) === 1);
  return row;
}

const step = stepsWithShots('failed', () => page);

describe('web UI', {timeout: 240000}, () => {
  before(async () => {
    assert.ok(BINARY, 'CHIME_BINARY names the chime binary');
    mkdirSync(ARTIFACTS, {recursive: true});
    daemon = await startDaemon(BINARY, JOBS, join(ARTIFACTS, 'daemon.log'));
    browser = await launchBrowser();
    page = await openPage(browser);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      // Expected error answers: 401 (how the UI learns it needs a token) and
      // the 400s of provoked400. Anything else (a script error, a
      // Content-Security-Policy violation) is a fault.
      const expected = /status of 401/.test(m.text()) ||
          (/status of 400/.test(m.text()) && provoked400.some((p) => m.location().url.includes(p)));
      if (m.type() === 'error' && !expected) problems.push(`console: ${m.text()} (${m.location().url})`);
    });
  });

  after(async () => {
    if (browser) await browser.close();
    if (daemon) await daemon.stop();
  });

  step('asks for a token, refuses a wrong one, and signs in with a right one', async () => {
    await page.goto(daemon.url + '/');
    await page.getByLabel('API token').waitFor();
    await shot('login');
    await signIn('not-a-token');
    await until('the refusal', async () => /not accepted/.test(await text('main')));
    await signIn(TOKENS.admin);
    await page.getByRole('heading', {name: 'Jobs'}).waitFor();
    assert.match(await text('#who'), /Signed in as ui-admin/);
    assert.equal(await page.evaluate(() => document.cookie), '');
  });

  step('lists the job files\' jobs with their schedule in words', async () => {
    const row = await jobsRow('monthly', 'ops/monthly');
    const cells = await row.locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(0, 2), ['ops', 'monthly']);
    assert.match(cells[2], /At 03:00/);
    assert.match(cells[2], /0 3 1 \* \*/);
    assert.equal(cells[3], 'Europe/Berlin');
    // The next fire, 03:00 in Berlin on the 1st, is the evening before in
    // New York (21:00, or 20:00 / 22:00 in the weeks the two switch
    // daylight saving on different days).
    assert.match(cells[4], /(8|9|10):00:00 PM E[SD]T/);
    assert.match(cells[5], /never run/);
    assert.match(cells[6], /Active/);
    await go('#/jobs');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Namespace').fill('ops');
    await until('the three ops jobs listed', async () => (await page.locator('#jobs-results tbody tr').count()) === 3);
  });

  step('pages through many jobs, 50 at a time', async () => {
    const rows = page.locator('#jobs-results tbody tr');
    const jobIds = async () => (await rows.locator('td:nth-child(2)').allInnerTexts());
    await page.getByLabel('Namespace').fill('bulk');
    await until('the first page', async () => (await jobIds())[0] === 'job-000' && (await rows.count()) === 50);
    assert.equal((await jobIds())[49], 'job-049');
    assert.equal(await page.getByRole('button', {name: 'Previous page'}).isDisabled(), true);
    await page.getByRole('button', {name: 'Next page'}).click();
    await until('the second page', async () => (await jobIds())[0] === 'job-050');
    assert.equal(await rows.count(), 50);
    await page.getByRole('button', {name: 'Next page'}).click();
    await until('the last page', async () => (await jobIds())[0] === 'job-100');
    assert.deepEqual((await jobIds()).slice(-1), ['job-119']);
    assert.equal(await rows.count(), 20);
    assert.match(await text('.pager'), /Page 3: 20 jobs/);
    assert.equal(await page.getByRole('button', {name: 'Next page'}).isDisabled(), true);
    await page.getByRole('button', {name: 'Previous page'}).click();
    await until('the second page again', async () => (await jobIds())[0] === 'job-050');
    await page.getByLabel('Namespace').fill('');
  });

  step('creates a job, lists it, triggers it and streams its output live', async () => {
    await go('#/jobs');
    await page.getByRole('button', {name: 'New job'}).click();
    await page.getByLabel('Job definition (JSON)').fill(JSON.stringify({
      id: 'stream', namespace: 'web', schedule: '0 0 1 1 *', zone: 'UTC',
      shell: {command: 'echo first-line; sleep 6; echo last-line'},
    }));
    await page.getByRole('button', {name: 'Create job'}).click();
    await page.getByRole('heading', {name: 'Job web/stream'}).waitFor();

    const row = await jobsRow('stream', 'web/stream');
    assert.match((await row.locator('td').allInnerTexts())[5], /never run/);
    await row.getByRole('button', {name: 'Trigger now: web/stream'}).click();
    await page.locator('.notice', {hasText: 'Triggered web/stream'}).getByRole('link').click();
    await page.getByRole('heading', {name: /^Run \d+ of web\/stream$/}).waitFor();
    // The first line arrives while the command still sleeps: streamed.
    await until('the first line', async () => (await text('#run-output')).includes('first-line'));
    assert.ok(!(await text('#run-output')).includes('last-line'), 'the output came before the run ended');
    assert.match(await text('#run-state'), /running/);
    assert.match(await text('#output-state'), /Following the output/);
    await shot('run');
    await until('the last line', async () => (await text('#run-output')).includes('last-line'), 30000);
    await until('the run to succeed', async () => /succeeded/.test(await text('#run-state')));
    assert.match(await text('main'), /Exit code or HTTP status/);
  });

  step('pauses and resumes a job', async () => {
    let row = await jobsRow('stream', 'web/stream');
    await row.getByRole('button', {name: 'Pause web/stream'}).click();
    await until('the job paused', async () => (await apiCall(daemon.url, 'GET', '/v1/jobs/web/stream')).status.paused);
    row = await jobsRow('stream', 'web/stream');
    await until('the row to say paused', async () => /Paused/.test((await row.locator('td').allInnerTexts())[6]));
    await row.getByRole('button', {name: 'Resume web/stream'}).click();
    await until('the job resumed', async () => !(await apiCall(daemon.url, 'GET', '/v1/jobs/web/stream')).status.paused);
    row = await jobsRow('stream', 'web/stream');
    await until('the row to say active', async () => /Active/.test((await row.locator('td').allInnerTexts())[6]));
  });

  step('shows a failed run with its retries, and lists it as a dead letter to retry', async () => {
    const row = await jobsRow('flaky', 'ops/flaky');
    await row.getByRole('button', {name: 'Trigger now: ops/flaky'}).click();
    await page.locator('.notice', {hasText: 'Triggered ops/flaky'}).getByRole('link').click();
    await page.getByRole('heading', {name: /^Run \d+ of ops\/flaky$/}).waitFor();
    await until('the run to fail after its retry', async () => /failed/.test(await text('#run-state')), 30000);
    const attempts = page.locator('section[aria-labelledby="attempts-h"] tbody tr');
    await until('two attempts', async () => (await attempts.count()) === 2);
    // Attempt 1 failed and was retried; attempt 2 failed for good.
    const first = await attempts.nth(0).locator('td').allInnerTexts();
    const second = await attempts.nth(1).locator('td').allInnerTexts();
    assert.deepEqual([first[4], first[5]], ['retrying', '7']);
    assert.deepEqual([second[4], second[5]], ['failed', '7']);
    assert.match(second[6], /exhausted 2 attempts/);
    assert.match(await text('#run-output'), /boom/);
    const runId = /Run (\d+)/.exec(await text('h1'))[1];

    await go('#/dead-letters');
    const deadRow = page.locator('#dead-letters-results tr', {hasText: new RegExp(`run ${runId}(?!\\d)`)});
    await deadRow.waitFor();
    await shot('dead-letters');
    await deadRow.getByRole('button', {name: `Retry now: run ${runId} of ops/flaky`}).click();
    await until('the retry notice', async () => new RegExp(`Retrying run ${runId} of ops/flaky: run \\d+`)
        .test(await text('#notices')));
  });

  step('shows a job\'s definition, next fire times across daylight saving, and history with skipped fires', async () => {
    await go('#/jobs/ops/monthly');
    await until('the file banner', async () => /Defined by the job file .*ops\.yaml/.test(await text('#managed-by')));
    assert.match(await text('#definition'), /"schedule": "0 3 1 \* \*"/);
    const next = page.locator('section[aria-labelledby="next-h"]');
    await until('20 fire rows', async () => (await next.locator('tbody tr:not(.dst)').count()) === 20);
    const dst = await next.locator('tbody tr.dst').allInnerTexts();
    // 20 months cross at least one spring and one autumn change.
    assert.ok(dst.some((t) => /Daylight saving in Europe\/Berlin: UTC offset \+01:00 → \+02:00/.test(t)), dst.join('\n'));
    assert.ok(dst.some((t) => /UTC offset \+02:00 → \+01:00/.test(t)), dst.join('\n'));
    // No edit or delete for a job file's job; triggering is allowed.
    assert.equal(await page.getByRole('button', {name: 'Edit definition'}).count(), 0);
    assert.equal(await page.getByRole('button', {name: 'Delete ops/monthly'}).count(), 0);

    await go('#/jobs/ops/busy');
    const history = page.locator('section[aria-labelledby="history-h"]');
    await until('a skipped fire with its reason', async () =>
      /skipped: the previous run was still going \(overlap policy\)/.test(await history.innerText()), 30000);
    await history.locator('svg.chart').waitFor();
    // Past its end date: the first fire after it is shown with the reason.
    // (The page reads the history again on the job's run events, which stop
    // with the job: look again until the record is there.)
    await until('the fire past the end date with its reason', async () => {
      if (/not run: the job's end date had passed/.test(await history.innerText())) return true;
      await go('#/jobs/ops/monthly');
      await go('#/jobs/ops/busy');
      await history.locator('svg.chart').waitFor();
      return false;
    }, 30000);
    await shot('job');
  });

  step('marks a bad schedule expression at its column and previews a good one', async () => {
    await go('#/schedule');
    provoked400.push('/v1/schedule/preview?expression=0+0+32+');
    const expression = page.getByLabel('Expression');
    await expression.fill('0 0 32 * *');
    await until('the error', async () => /day-of-month: 32 is outside 1-31/.test(await text('#schedule-error')));
    assert.equal(await expression.getAttribute('aria-invalid'), 'true');
    // The caret is under column 5, where "32" starts.
    const caret = await page.locator('#schedule-error pre.caret').innerText();
    assert.equal(caret.split('\n')[1], '    ^');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await expression.fill('0 12 1 * *');
    await until('the description', async () => /12:00/.test(await text('#schedule-description')));
    assert.equal(await expression.getAttribute('aria-invalid'), null);
    assert.equal(await page.locator('#schedule-result tbody tr:not(.dst)').count(), 10);
    assert.ok((await page.locator('#schedule-result tbody tr.dst').count()) >= 1);
    await shot('schedule');
  });

  step('shows each job\'s last run in the list', async () => {
    await go('#/jobs');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Namespace').fill('ops');
    await until('the three ops jobs', async () => (await page.locator('#jobs-results tbody tr').count()) === 3);
    const row = page.locator('#jobs-results tbody tr', {has: page.getByRole('link', {name: 'ops/flaky', exact: true})});
    await until('the failed last run', async () => /failed/.test((await row.locator('td').allInnerTexts())[5]));
    await row.getByRole('link', {name: /^run \d+: failed$/}).waitFor();
    await shot('jobs');
    await page.getByLabel('Namespace').fill('');
  });

  step('shows the overview', async () => {
    await go('#/overview');
    await page.getByRole('heading', {name: 'Runs per minute, by outcome'}).waitFor();
    await page.locator('section[aria-labelledby="rpm-h"] svg.chart').waitFor();
    // The chart as a table: the failed runs of ops/flaky are counted.
    await page.getByText('As a table').click();
    const failedColumn = await page.locator('section[aria-labelledby="rpm-h"] tbody tr td:nth-child(3)').allInnerTexts();
    assert.ok(failedColumn.map(Number).reduce((a, b) => a + b, 0) >= 2, failedColumn.join(','));
    await until('the schedule lag', async () => /Median lag/.test(await text('main')));
    assert.match(await text('section[aria-labelledby="counts-h"]'), /Jobs\s+124/);
    await shot('overview');
  });

  step('updates a job\'s history live from the event stream', async () => {
    await go('#/jobs/web/stream');
    const history = page.locator('section[aria-labelledby="history-h"]');
    await until('the history', async () => /run \d+/.test(await history.innerText()));
    // The job page does not poll: only an event can make it read the history again.
    const made = await apiCall(daemon.url, 'POST', '/v1/jobs/web/stream/trigger');
    await until(`run ${made.run_id} in the history`, async () =>
      new RegExp(`run ${made.run_id}(?!\\d)`).test(await history.innerText()));
  });

  step('edits an API job\'s definition, showing the server\'s error for a bad one', async () => {
    await go('#/jobs/web/stream');
    provoked400.push('/v1/jobs/web/stream');
    await page.getByRole('button', {name: 'Edit definition'}).click();
    const spec = {id: 'stream', namespace: 'web', schedule: '0 0 1 1 *', retry: {max_attempts: 0},
      shell: {command: 'echo edited'}};
    await page.getByLabel('Job definition (JSON)').fill(JSON.stringify(spec));
    await page.getByRole('button', {name: 'Save'}).click();
    await until('the refusal naming the field', async () =>
      /retry\.max_attempts: 0 is below 1/.test(await text('#def-h + form')));
    delete spec.retry;
    await page.getByLabel('Job definition (JSON)').fill(JSON.stringify(spec));
    await page.getByRole('button', {name: 'Save'}).click();
    await until('the new definition', async () => /echo edited/.test(await text('#definition')));
    const job = await apiCall(daemon.url, 'GET', '/v1/jobs/web/stream');
    assert.equal(job.spec.shell.command, 'echo edited');
    provoked400.pop();
  });

  step('deletes a job only after confirmation', async () => {
    let row = await jobsRow('stream', 'web/stream');
    await row.getByRole('button', {name: 'Delete web/stream'}).click();
    await page.getByRole('dialog').getByRole('button', {name: 'Cancel'}).click();
    await apiCall(daemon.url, 'GET', '/v1/jobs/web/stream');  // still there
    row = await jobsRow('stream', 'web/stream');
    await row.getByRole('button', {name: 'Delete web/stream'}).click();
    await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
    await until('the job gone', async () => /No job matches/.test(await text('#jobs-results')));
    await assert.rejects(apiCall(daemon.url, 'GET', '/v1/jobs/web/stream'), /404/);
  });

  step('shows a read-only user no write buttons', async () => {
    await page.getByRole('button', {name: 'Sign out'}).click();
    await signIn(TOKENS.reader);
    await page.getByRole('heading', {name: 'Jobs'}).waitFor();
    assert.equal(await text('#role'), 'read-only');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Namespace').fill('ops');
    await until('the jobs', async () => (await page.locator('#jobs-results tbody tr').count()) === 3);
    assert.equal(await page.getByRole('button', {name: /Trigger|Pause|Resume|Delete|New job/}).count(), 0);
    await go('#/jobs/ops/flaky');
    await until('the history', async () => /failed/.test(await text('section[aria-labelledby="history-h"]')));
    assert.equal(await page.locator('main button').count(), 0);
    await go('#/dead-letters');
    await page.locator('#dead-letters-results tbody tr').first().waitFor();
    assert.equal(await page.getByRole('button', {name: /Retry/}).count(), 0);
  });

  step('fits a narrow screen', async () => {
    await page.setViewportSize({width: 390, height: 844});
    await go('#/jobs');
    await page.locator('#jobs-results tbody tr').first().waitFor();
    // The page itself does not scroll sideways; the table scrolls in its box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    await shot('jobs-narrow');
  });

  step('follows the system\'s dark theme', async () => {
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({colorScheme: 'light'});
    assert.equal(await background(), 'rgb(255, 255, 255)');
    await page.emulateMedia({colorScheme: 'dark'});
    assert.equal(await background(), 'rgb(26, 32, 44)');
    await shot('jobs-narrow-dark');
    await page.emulateMedia({colorScheme: 'light'});
  });

  step('needs no login when the daemon has no tokens', async () => {
    const open = await startDaemon(BINARY, {'one.yaml': JOBS['ops.yaml']}, join(ARTIFACTS, 'daemon-open.log'),
        {tokens: false});
    const other = await browser.newPage();
    try {
      await other.goto(open.url + '/');
      await other.getByRole('heading', {name: 'Jobs'}).waitFor({timeout: WAIT});
      assert.equal(await other.locator('#role').innerText(), 'admin');
      assert.equal(await other.getByLabel('API token').count(), 0);
      assert.equal(await other.getByRole('button', {name: 'Sign out'}).count(), 0);
      await other.getByRole('button', {name: 'Trigger now: ops/monthly'}).waitFor({timeout: WAIT});
    } finally {
      await other.close();
      await open.stop();
    }
  });

  it('raised no script error or Content-Security-Policy violation', () => {
    assert.deepEqual(problems, []);
  });
});
