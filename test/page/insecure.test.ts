// The page in an insecure context: a self-hosted server reached over plain HTTP by its
// LAN address, as most are, is no secure context, and browsers leave out what is [SecureContext]
// there (crypto.randomUUID, navigator.clipboard, crypto.subtle). The built server listens on this
// side of a veth pair, and Debian's chromium runs inside the network namespace on the other side,
// so the page's origin is http://10.231.x.y:PORT/ and every request crosses a real interface.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCollector, type Collector } from '../support/collector.js';
import { canMakeNetns, createNetns, type Netns } from '../support/netns.js';
import { serveCli, type Serving } from '../support/process.js';
import { requireCommands } from '../support/system.js';
import { eventually } from '../support/wait.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const ready = canMakeNetns() && requireCommands('page in an insecure context', ['chromium', 'ip'], 'chromium iproute2');
if (!canMakeNetns()) {
  if (process.env.CI === 'true') throw new Error('page in an insecure context: needs root for network namespaces; CI requires it');
  process.stderr.write('\n*** SKIPPED page in an insecure context: needs root for network namespaces ***\n\n');
}

describe.skipIf(!ready)('the page over plain HTTP by a LAN address (an insecure context)', () => {
  // Each is set once its part of the set-up succeeded, so a failed start still cleans up the rest.
  let netns: Netns | undefined;
  let collector: Collector | undefined;
  let serving: Serving | undefined;
  let browser: Browser | undefined;
  let wrapperDir: string | undefined;
  let base = '';
  let nsAddress = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    netns = createNetns();
    nsAddress = netns.nsAddress;
    collector = await startCollector('accept');
    // The built server, as `netdiag serve` runs, on the host's end of the pair.
    serving = await serveCli({ HOST: netns.hostAddress, NETDIAG_EVENTS_SINK: collector.url });
    base = `http://${netns.hostAddress}:${String(serving.port)}`;
    // The browser on the namespace's end: playwright starts "chromium" through this wrapper,
    // which keeps its arguments and the pipe it is driven over (fds 3 and 4).
    wrapperDir = mkdtempSync(join(tmpdir(), 'netdiag-chromium-'));
    const wrapper = join(wrapperDir, 'chromium-in-netns');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${netns.exec([CHROMIUM]).join(' ')} "$@"\n`);
    chmodSync(wrapper, 0o755);
    browser = await chromium.launch({ executablePath: wrapper, args: ['--no-sandbox'], timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (serving !== undefined) {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
    await collector?.close();
    netns?.destroy();
    if (wrapperDir !== undefined) rmSync(wrapperDir, { recursive: true, force: true });
  });

  const events = () => collector?.events() ?? [];

  /** A fresh page on the server, recording uncaught exceptions and console errors. */
  async function open(): Promise<{ page: Page; errors: string[]; firstError: Promise<string> }> {
    if (browser === undefined) throw new Error('chromium did not start');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    let report: (message: string) => void = () => undefined;
    const firstError = new Promise<string>((resolve) => (report = resolve));
    const record = (message: string) => {
      errors.push(message);
      report(message);
    };
    page.on('pageerror', (error) => { record(`uncaught: ${error.message}`); });
    page.on('console', (message) => {
      if (message.type() === 'error') record(`console error: ${message.text()}`);
    });
    await page.goto(`${base}/`);
    return { page, errors, firstError };
  }

  it('runs the light speed test to a result, its events reach the server, and Copy says it cannot copy', async () => {
    const { page, errors, firstError } = await open();
    // The premise: this origin is not a secure context, so what is [SecureContext] is missing.
    expect(page.url()).toBe(`${base}/`);
    expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
    expect(await page.evaluate(() => typeof (crypto as { randomUUID?: unknown }).randomUUID)).toBe('undefined');
    // The request crossed the veth pair: the server saw the namespace's address.
    await expect.poll(() => page.textContent('#connection [data-field="ip_version"]')).toBe('IPv4');
    expect(await page.textContent('#address')).toBe(nsAddress);

    await page.selectOption('#speed-mode', 'light');
    await page.click('#speed-start');
    // Done, or the first error the page reports (so a throw on Start fails at once, not at the bound).
    const outcome = await Promise.race([
      page
        .locator('#speed-status', { hasText: /^Done\.$/ })
        .waitFor({ timeout: 90_000 })
        .then(() => 'Done.', (err: unknown) => `not done: ${String(err)}`),
      firstError,
    ]);
    expect(outcome).toBe('Done.');
    for (const name of ['download', 'upload']) {
      const shown = (await page.textContent(`#speed-results [data-metric="${name}"] .value`)) ?? '';
      expect(Number(/^([0-9.,]+)\sMbps$/.exec(shown)?.[1]?.replaceAll(',', ''))).toBeGreaterThan(0);
    }

    expect(await eventually(() => events().some((e) => e.event === 'speed_test_completed'), 10_000)).toBe(true);
    const started = events().find((e) => e.event === 'speed_test_started');
    const completed = events().find((e) => e.event === 'speed_test_completed');
    expect(started?.event_id).toMatch(V4);
    expect(completed?.event_id).toBe(started?.event_id);
    expect(started?.properties).toMatchObject({ source: 'web', mode: 'light' });
    expect(completed?.properties).toMatchObject({ source: 'web', mode: 'light' });
    expect(JSON.stringify(events())).not.toContain(nsAddress);

    // navigator.clipboard is missing here too: Share says so and shows the link to copy.
    expect(await page.evaluate(() => typeof (navigator as { clipboard?: unknown }).clipboard)).toBe('undefined');
    await page.click('#speed-share');
    expect(await page.textContent('#speed-share-said')).toBe('This page cannot copy over plain HTTP; copy the link below by hand.');
    expect(await page.textContent('#speed-share-link')).toMatch(/^http:\/\/[0-9.]+:[0-9]+\/#r=1~/);
    expect(await eventually(() => events().some((e) => e.event === 'speed_test_shared'), 10_000)).toBe(true);
    expect(events().find((e) => e.event === 'speed_test_shared')?.event_id).toBe(started?.event_id);

    await page.screenshot({ path: `${ARTIFACTS}page-insecure.png`, fullPage: true });
    expect(errors).toEqual([]);
  }, 120_000);

  it('offers no install command over plain HTTP, and says why (issue 69: anyone on the path could swap the package)', async () => {
    const { page, errors } = await open();
    await page.waitForSelector('#client-install-refused:not([hidden])');
    expect(await page.isHidden('#client-install')).toBe(true);
    expect(await page.textContent('#client-install-refused')).toMatch(/^This server offers the netdiag command line over HTTPS only: this page came over plain HTTP/);
    expect(await page.content()).not.toContain('npm install');
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
