// The full speed test through the reverse proxies operators copy from docs/proxies/: nginx
// terminating TLS with HTTP/2 (X-Forwarded-For), HAProxy passing PROXY protocol v2 over TLS, and
// HAProxy in HTTP mode. `netdiag speedtest` (full, the command line's default) and the page's full
// test in Chromium each run through each proxy and must complete with both rates. Here with the
// timed suites, one file at a time: a full test over loopback moves about 700 MB and takes the
// machine's two cores while it does. CI's set (test/support/timed-set.ts) goes through nginx alone;
// the full run through all three.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeCertificates, selfSignedCertificate } from '../support/doh-relay.js';
import { documentedConfig } from '../support/documented-config.js';
import { freePort } from '../support/wait.js';
import { runCli } from '../support/process.js';
import { startHaproxyWith, startNginx, type Proxy } from '../support/proxies.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { timedCases } from '../support/timed-set.js';

const ready = requireCommands('the full speed test through reverse proxies', ['nginx', 'haproxy', 'openssl', 'chromium'], 'nginx haproxy openssl chromium');

/** The proxies this run goes through. */
const PROXIES = timedCases(['nginx', 'haproxy-tcp', 'haproxy-http'] as const, (name) => name === 'nginx', (name) => `through ${name}`);

describe.skipIf(!ready)('the full speed test through the documented proxies', () => {
  const servers: TestServer[] = [];
  const proxies: Proxy[] = [];
  let browser: Browser;
  let caFile: string;
  let scratch: string;
  const through: Record<'nginx' | 'haproxy-tcp' | 'haproxy-http', string> = { nginx: '', 'haproxy-tcp': '', 'haproxy-http': '' };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'netdiag-proxied-'));
    const cert = selfSignedCertificate();
    caFile = cert.certFile;
    const pem = join(scratch, 'haproxy.pem');
    writeFileSync(pem, readFileSync(cert.certFile, 'utf8') + readFileSync(cert.keyFile, 'utf8'));
    const behind = async (env: Record<string, string>) => {
      const server = await startTestServer({ NETDIAG_TRUST_PROXY: '127.0.0.1', NETDIAG_RATE_LIMITS: 'speedtest=100000', ...env });
      servers.push(server);
      return server.port;
    };
    const [forwarded, proxyV2, httpMode] = [await behind({}), await behind({ NETDIAG_PROXY_PROTOCOL: 'on' }), await behind({})];
    const [n, t, h] = [await freePort(), await freePort(), await freePort()];
    proxies.push(
      await startNginx(
        documentedConfig('nginx.conf', [
          ['server 127.0.0.1:8080;', `server 127.0.0.1:${String(forwarded)};`],
          ['listen 443 ssl http2;', `listen 127.0.0.1:${String(n)} ssl http2;`],
          ['/etc/ssl/netdiag.pem;', `${cert.certFile};`],
          ['/etc/ssl/netdiag.key;', `${cert.keyFile};`],
        ]),
        [n],
      ),
      await startHaproxyWith(
        documentedConfig('haproxy-tcp.cfg', [
          ['bind :443 ssl crt /etc/ssl/netdiag.pem', `bind 127.0.0.1:${String(t)} ssl crt ${pem}`],
          ['server netdiag 127.0.0.1:8080', `server netdiag 127.0.0.1:${String(proxyV2)}`],
        ]),
        [t],
      ),
      await startHaproxyWith(
        documentedConfig('haproxy-http.cfg', [
          ['bind :80', `bind 127.0.0.1:${String(h)}`],
          ['server netdiag 127.0.0.1:8080', `server netdiag 127.0.0.1:${String(httpMode)}`],
        ]),
        [h],
      ),
    );
    through.nginx = `https://127.0.0.1:${String(n)}`;
    through['haproxy-tcp'] = `https://127.0.0.1:${String(t)}`;
    through['haproxy-http'] = `http://127.0.0.1:${String(h)}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    for (const proxy of proxies) await proxy.close();
    for (const server of servers) await server.close();
    rmSync(scratch, { recursive: true, force: true });
    removeCertificates();
  });

  it.each(PROXIES)('through %s: netdiag speedtest (full) completes with both rates', async (name) => {
    const run = await runCli(['speedtest', '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', through[name]], { NODE_EXTRA_CA_CERTS: caFile }, 240_000);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { download_mbps: number | null; upload_mbps: number | null };
    process.stdout.write(`CLI full through ${name}: ${String(report.download_mbps)} down / ${String(report.upload_mbps)} up Mbit/s\n`);
    expect(report.download_mbps).toBeGreaterThan(0);
    expect(report.upload_mbps).toBeGreaterThan(0);
  }, 300_000);

  it.each(PROXIES)("through %s: the page's full test completes with both rates", async (name) => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await page.goto(`${through[name]}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      await page.selectOption('#speed-mode', 'full');
      await page.click('#speed-start');
      await expect.poll(() => page.textContent('#speed-status'), { timeout: 200_000, interval: 500 }).toMatch(/^(Done\.|The test did not finish\.)$/);
      const error = (await page.isVisible('#speed-error')) ? await page.textContent('#speed-error') : '';
      expect(await page.textContent('#speed-status'), error ?? '').toBe('Done.');
      const rate = async (metric: string) => Number(await page.getAttribute(`#speed-results [data-metric="${metric}"]`, 'data-value'));
      const [down, up] = [await rate('download'), await rate('upload')];
      process.stdout.write(`page full through ${name}: ${(down / 1e6).toFixed(0)} down / ${(up / 1e6).toFixed(0)} up Mbit/s\n`);
      expect(down).toBeGreaterThan(0);
      expect(up).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  }, 300_000);
});
