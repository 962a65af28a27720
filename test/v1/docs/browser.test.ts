/**
 * /v1/docs in a real browser: Debian's chromium, driven by playwright-core. The page loads from the
 * service alone with no failed request, no console error and no CSP violation, shows both data
 * operations, and tries them: without a key the 401 problem is shown, with an authorized key a 200.
 * UPDATE_SCREENSHOT=1 also writes docs/reference.png, the picture in docs/clients.md.
 *
 * Without chromium the test is skipped, except in CI (`CI` set), where a missing browser fails it.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import t from 'tap';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';

const CHROMIUM = '/usr/bin/chromium';
const WELLS = '/groundwater-monitoring-wells';
const SERIES = '/groundwater-monitoring-tubes/{tubeIdentifier}/measurements';
const SCREENSHOT = new URL('../../../docs/reference.png', import.meta.url);
const VIEWPORT = { width: 1280, height: 900 };
/** How long one step of the page (a click, a response shown) may take. */
const STEP_TIMEOUT_MS = 15_000;

/** What the page must not do, collected while it runs. */
interface Trouble {
  foreignRequests: string[];
  failedRequests: string[];
  errorResponses: string[];
  consoleErrors: string[];
}

/** Reports every CSP violation on the console, where it counts as an error. */
const REPORT_CSP_VIOLATIONS = `document.addEventListener('securitypolicyviolation', (event) =>
  console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI));`;

async function openDocs(browser: Browser, base: string): Promise<{ page: Page; trouble: Trouble }> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const trouble: Trouble = { foreignRequests: [], failedRequests: [], errorResponses: [], consoleErrors: [] };
  // Nothing leaves the machine: a request to any other origin is recorded and never sent.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === base) return route.continue();
    trouble.foreignRequests.push(url);
    return route.abort();
  });
  await context.addInitScript(REPORT_CSP_VIOLATIONS);
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.on('requestfailed', (request) => {
    trouble.failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400)
      trouble.errorResponses.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error')
      trouble.consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => trouble.consoleErrors.push(`uncaught: ${error.message}`));
  await page.goto(`${base}/v1/docs`);
  return { page, trouble };
}

/** The block of the GET operation on `path`, as Swagger UI shows it. */
const getOperation = (page: Page, path: string): Locator =>
  page.locator('.opblock-get', { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

/** Opens the operation and its "Try it out" form. */
async function tryOut(operation: Locator): Promise<void> {
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn', { hasText: 'Try it out' }).click();
}

/** Clicks Execute and returns the status and body the page then shows. */
async function execute(
  page: Page,
  operation: Locator,
  path: string,
): Promise<{ status: string; body: string }> {
  const answered = page.waitForResponse((response) => new URL(response.url()).pathname === path);
  await operation.locator('button.execute').click();
  await answered;
  const shown = operation.locator('.live-responses-table .response');
  await shown.locator('.response-col_description pre').first().waitFor();
  return {
    status: (await shown.locator('.response-col_status').textContent())?.trim() ?? '',
    body: (await shown.locator('.response-col_description pre').first().textContent()) ?? '',
  };
}

const chromiumMissing = !existsSync(CHROMIUM);
const skip = chromiumMissing && !process.env.CI && `${CHROMIUM} is missing (Debian package chromium)`;

t.test('the interactive reference in a browser', { skip }, async (t) => {
  if (chromiumMissing) {
    t.fail(`${CHROMIUM} is missing, and CI must run this test: .ci/run installs Debian's chromium`);
    return;
  }
  const api = await startApi(t);
  const [tube] = await addWell(api.db.sql, 'Browser Well', [{ number: '1' }]);
  await addMeasurements(api.db.sql, tube!.id, [['2024-01-01T00:00:00Z', '-1.25']]);
  const { key } = await addKey(api.db.sql, { tubeIds: [tube!.id] });

  // Root in CI: chromium's sandbox needs user namespaces a container rarely grants, so it is off
  // (the page is ours); /dev/shm of a container is too small for chromium's shared memory.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    chromiumSandbox: false,
    args: ['--disable-dev-shm-usage'],
  });
  t.teardown(() => browser.close());
  const { page, trouble } = await openDocs(browser, api.base);

  const wells = getOperation(page, WELLS);
  const series = getOperation(page, SERIES);
  await wells.waitFor();
  t.ok(await series.isVisible(), 'the series operation is shown');
  t.equal(await page.title(), 'Groundwater Monitoring Read API');

  if (process.env.UPDATE_SCREENSHOT === '1') {
    await page.locator('.scheme-container').evaluate((element) => element.scrollIntoView());
    await page.screenshot({ path: SCREENSHOT.pathname });
  }

  await tryOut(wells);
  const refused = await execute(page, wells, `/v1${WELLS}`);
  t.equal(refused.status, '401', 'without a key: 401');
  t.match(JSON.parse(refused.body), { type: 'about:blank', title: 'Unauthorized', status: 401 });

  await page.locator('.scheme-container button.authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('input').fill(key);
  await dialog.locator('.auth-btn-wrapper button.authorize').click();
  await dialog.locator('button.btn-done').click();

  const listed = await execute(page, wells, `/v1${WELLS}`);
  t.equal(listed.status, '200', 'with the key: 200');
  t.match(JSON.parse(listed.body), [{ name: 'Browser Well', tubes: [{ identifier: tube!.identifier }] }]);

  await tryOut(series);
  await series.locator('tr[data-param-name="tubeIdentifier"] input').fill(tube!.identifier);
  await series.locator('tr[data-param-name="from"] input').fill('2024-01-01T00:00:00Z');
  await series.locator('tr[data-param-name="to"] input').fill('2024-01-02T00:00:00Z');
  const measured = await execute(
    page,
    series,
    `/v1/groundwater-monitoring-tubes/${tube!.identifier}/measurements`,
  );
  t.equal(measured.status, '200', 'the series with the key: 200');
  t.match(JSON.parse(measured.body), {
    measurements: [{ observedAt: '2024-01-01T00:00:00Z', value: -1.25 }],
  });

  t.same(trouble.foreignRequests, [], 'no request to another host');
  t.same(trouble.failedRequests, [], 'no failed request');
  t.same(trouble.errorResponses, [`401 /v1${WELLS}`], 'no error response but the 401 asked for');
  t.same(
    trouble.consoleErrors,
    [
      `Failed to load resource: the server responded with a status of 401 (Unauthorized) (${api.base}/v1${WELLS})`,
    ],
    'no console error and no CSP violation, but the browser noting the 401',
  );

  t.test('the page may not reach another host or run inline script', async (t) => {
    const reported = (directive: string) =>
      page.waitForEvent('console', (message) => message.text().startsWith(`CSP violation: ${directive} `));
    const [connect] = await Promise.all([
      reported('connect-src'),
      page.evaluate("fetch('http://192.0.2.1/').catch(() => 'refused')"),
    ]);
    t.equal(connect.text(), 'CSP violation: connect-src http://192.0.2.1/');
    const [inline] = await Promise.all([
      reported('script-src-elem'),
      page.evaluate(`document.body.append(Object.assign(document.createElement('script'), {
        textContent: 'window.ran = true',
      }))`),
    ]);
    t.equal(inline.text(), 'CSP violation: script-src-elem inline');
    t.equal(await page.evaluate("'ran' in window"), false, 'the inline script did not run');
    t.same(trouble.foreignRequests, [], 'the browser refused before any request was made');
  });
});
