// The web UI on a standby (docs/cluster.md): two real daemons on a real
// PostgreSQL 15 server (tests/web/postgres.mjs), node-a scheduling and node-b
// waiting for its lease, in headless Chromium. node-b's UI shows the store's
// jobs, a job's history of the runs node-a made and the overview, under a
// banner naming the scheduling node; a job created there is run by node-a,
// and nothing offers a trigger; when node-a is killed (kill -9) and node-b
// takes over, the same page, not reloaded, drops the banner and offers
// triggers. Screenshots go to CHIME_WEB_ARTIFACTS.
//
//   CHIME_BINARY=build/test/cli/chime CHIME_WEB_ARTIFACTS=/tmp/shots \
//   CHIME_WEB_NODE_MODULES=build/test/tests/web/node_modules node --test tests/web/standby_e2e.test.mjs

import {describe, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {startDaemon, TOKENS} from './daemon.mjs';
import {startPostgres} from './postgres.mjs';
import {BINARY, ARTIFACTS, until, launchBrowser, openPage, go, signIn, stepsWithShots} from './support.mjs';

// A job every second; both nodes load the same file (docs/cluster.md).
const JOBS = {'web.yaml': `jobs:
  - id: tick
    namespace: web
    schedule: "@every 1s"
    shell: { command: "true" }
`};
const LEASE_TTL = '2s';

let pg;
let nodeA;
let nodeB;
let browser;
let page;
const problems = [];
const step = stepsWithShots('standby-failed', () => page);
const text = (selector) => page.locator(selector).innerText();
const shot = (name) => page.screenshot({path: join(ARTIFACTS, `standby-${name}.png`), fullPage: true});

const node = (name) => startDaemon(BINARY, JOBS, join(ARTIFACTS, `standby-${name}.log`),
    {args: ['--store', pg.url, '--node-name', name, '--lease-ttl', LEASE_TTL,
      '--shards', '0']});

describe('web UI on a standby', {timeout: 240000}, () => {
  before(async () => {
    assert.ok(BINARY, 'CHIME_BINARY names the chime binary');
    mkdirSync(ARTIFACTS, {recursive: true});
    pg = await startPostgres();
    nodeA = await node('node-a');
    assert.match(nodeA.logText(), /"chime serving"/);
    nodeB = await node('node-b');
    assert.match(nodeB.logText(), /"standby serving/);
    browser = await launchBrowser();
    page = await openPage(browser);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      // 401: how the UI learns it needs a token; 503: the standby refusing
      // the event stream; failed fetches while node-b's listener restarts.
      const expected = /status of (401|503)|Failed to fetch|ERR_CONNECTION_REFUSED/.test(m.text());
      if (m.type() === 'error' && !expected) problems.push(`console: ${m.text()} (${m.location().url})`);
    });
  });

  after(async () => {
    if (browser) await browser.close();
    for (const d of [nodeA, nodeB]) if (d) await d.stop();
    if (pg) await pg.stop();
  });

  step('shows the store under a banner naming the scheduling node', async () => {
    await page.goto(nodeB.url + '/');
    await signIn(page, TOKENS.admin);
    await page.getByRole('heading', {name: 'Jobs'}).waitFor();
    await until('the banner', async () => /This node \(node-b\) is a standby/.test(await text('#node-role')));
    assert.match(await text('#node-role'), /triggers, cancels and retries are made on it: node-a\./);
    const row = page.locator('#jobs-results tbody tr', {hasText: 'tick'});
    await row.waitFor();
    assert.deepEqual((await row.locator('td').allInnerTexts()).slice(0, 2), ['web', 'tick']);
    // A job file's job offers only a trigger, which a standby does not.
    assert.equal(await row.getByRole('button').count(), 0);
    await shot('jobs');
  });

  step('creates a job that the scheduling node runs', async () => {
    await page.getByRole('button', {name: 'New job'}).click();
    await page.getByLabel('Job definition (JSON)').fill(JSON.stringify({
      id: 'made-here', namespace: 'web', schedule: '@every 1s', shell: {command: 'true'},
    }));
    await page.getByRole('button', {name: 'Create job'}).click();
    await page.getByRole('heading', {name: 'Job web/made-here'}).waitFor();
    const history = page.locator('section[aria-labelledby="history-h"]');
    // The page does not poll (no event stream here): reload it until node-a's runs show,
    // letting each load finish (the history reads every run's detail) before the next.
    await until('node-a\'s runs of it', async () => {
      await go(page, '#/jobs');
      await go(page, '#/jobs/web/made-here');
      await page.getByRole('heading', {name: 'Job web/made-here'}).waitFor();
      await history.getByRole('heading', {name: 'History'}).waitFor({timeout: 10000});
      return /run \d+/.test(await history.innerText());
    });
    assert.equal(await page.getByRole('button', {name: /Trigger now/}).count(), 0);
    await page.getByRole('button', {name: 'Pause web/made-here'}).waitFor();
    await shot('created');
  });

  step('shows a job\'s history of the runs the scheduling node made', async () => {
    await go(page, '#/jobs/web/tick');
    const history = page.locator('section[aria-labelledby="history-h"]');
    await until('runs in the history', async () => /run \d+/.test(await history.innerText()));
    assert.match(await text('#definition'), /"schedule": "@every 1s"/);
    assert.equal(await page.getByRole('button', {name: /Trigger now|Pause/}).count(), 0);
    await shot('job');
  });

  step('shows the overview with the node\'s role', async () => {
    await go(page, '#/overview');
    const counts = page.locator('section[aria-labelledby="counts-h"]');
    await until('the standby\'s cards', async () => /Role\s+standby/.test(await counts.innerText()));
    assert.match(await counts.innerText(), /Scheduling node\s+node-a/);
    assert.match(await counts.innerText(), /Live nodes\s+2/);
    assert.match(await counts.innerText(), /Jobs\s+2/);
    await page.locator('section[aria-labelledby="rpm-h"] svg.chart').waitFor();
    await shot('overview');
  });

  step('drops the banner and offers triggers once the standby takes over', async () => {
    await go(page, '#/jobs');
    await page.locator('#jobs-results tbody tr', {hasText: 'tick'}).waitFor();
    nodeA.kill();
    // The lease expires (2 s), node-b takes it and restarts its listener on
    // the same port; the page checks the role every 5 s.
    await until('the banner gone', async () => await page.locator('#node-role').isHidden(), 30000);
    await page.getByRole('button', {name: 'Trigger now: web/tick'}).waitFor();
    await go(page, '#/overview');
    const counts = page.locator('section[aria-labelledby="counts-h"]');
    await until('the scheduler\'s counts', async () => /Fires run\s+\d+/.test(await counts.innerText()));
    assert.doesNotMatch(await counts.innerText(), /Role/);
    await shot('took-over');
    assert.deepEqual(problems, []);
  });
});
