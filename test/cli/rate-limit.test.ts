// The command line against a server's rate limit (src/cli/api/rate-limit.ts): a refused request is
// waited out as the server asks and the command goes on, saying so; a refusal it cannot wait out
// is exit 4. The speed test runs against the real server with a limit lowered on purpose; the
// one-request commands against a FAKE API in this file (fakeLimitedApi), since the real server's
// window makes every wait the rest of a minute.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliReport } from '../support/cli-report.js';
import { runCli } from '../support/process.js';
import { spendSpeedtestWindow } from '../support/rate-window.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';

/** /v1/ip's data as the real server answers it, for another address. */
const IP_DATA = {
  address: '192.0.2.7',
  ip_version: 'ipv4',
  reverse_hostname: null,
  network: { asn: null, organization: null },
  location: { city: null, region: null, country: null, country_code: null, postal_code: null, timezone: null, latitude: null, longitude: null },
  connection: { provider_colo: null, http_protocol: 'HTTP/1.1', tls_version: null },
  data_provenance: 'observed_connection',
};

/** A FAKE /v1/ip that answers 429 with `retryAfter` to the first `refusals` requests, then the API's envelope. */
async function fakeLimitedApi(refusals: number, retryAfter: string): Promise<{ url: string; asked: number[]; server: Server }> {
  const asked: number[] = [];
  const server = createServer((_req, res) => {
    asked.push(Date.now());
    if (asked.length <= refusals) {
      res.writeHead(429, { 'Content-Type': 'application/problem+json', 'Retry-After': retryAfter }).end(JSON.stringify({ title: 'Too many requests', status: 429, detail: 'More than 120 ip requests from this source in one minute' }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ data: IP_DATA, meta: { api_version: 'v1' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`, asked, server };
}

let fake: Server | undefined;
let real: TestServer | undefined;
afterEach(async () => {
  fake?.close();
  fake = undefined;
  await real?.close();
  real = undefined;
});

describe('a command the rate limit refuses', () => {
  it('waits the Retry-After once, asks again, says so on standard error, and succeeds', async () => {
    const api = await fakeLimitedApi(1, '1');
    fake = api.server;
    const run = await runCli(['ip', '--json', '--url', api.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ address: '192.0.2.7' });
    expect(run.stderr).toContain("netdiag: the server's rate limit refused /v1/ip (429); waiting 1 s as it asks (Retry-After), then asking again");
    expect(api.asked).toHaveLength(2);
    expect((api.asked[1] ?? 0) - (api.asked[0] ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it('refused again after the wait: exit 4 with the problem\'s words', async () => {
    const api = await fakeLimitedApi(2, '1');
    fake = api.server;
    const run = await runCli(['ip', '--url', api.url]);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('netdiag: Too many requests: More than 120 ip requests from this source in one minute');
    expect(api.asked).toHaveLength(2);
  });

  it('a Retry-After past the limit\'s one-minute window is not waited: exit 4 at once, saying when to try', async () => {
    const api = await fakeLimitedApi(1, '3600');
    fake = api.server;
    const run = await runCli(['ip', '--url', api.url]);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('(not waited: it asks to wait 3600 s; try again then)');
    expect(api.asked).toHaveLength(1);
  });

  it('watch does not wait: its poll is recorded as limited and the next poll comes on time', async () => {
    const api = await fakeLimitedApi(1000, '30');
    fake = api.server;
    const run = await runCli(['watch', '--count', '2', '--interval', '1', '--json', '--url', api.url], {}, 20_000);
    expect(run.stderr).not.toContain('waiting');
    const polls = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { status?: string });
    expect(polls.filter((p) => p.status === 'limited').length).toBeGreaterThanOrEqual(2);
  });
});

describe('netdiag speedtest under a speed-test limit lowered on purpose (real server)', () => {
  it('meets the limit, waits the rest of the window as the server asks, measures the refused part again, finishes with its figures and says so', { timeout: 240_000 }, async () => {
    // A limit a whole light test fits in (they cost 150 to 400 requests here), nearly used up
    // first (support/rate-window.ts): the test meets it within its first requests, waits the rest
    // of the window once, and runs on in a fresh one, whatever a test costs on this machine.
    const limit = 1_000;
    real = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: `speedtest=${String(limit)}` });
    await spendSpeedtestWindow(real.url, limit - 5);
    const run = await runCli(['speedtest', '--mode', 'light', '--json', '--no-packet-loss', '--no-analytics', '--url', real.url], {}, 180_000);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as CliReport;
    process.stdout.write(`rate limit: at a limit of ${String(limit)}, ${String(limit - 5)} used first, the light test waited ${String(report.rate_limit_waits)} time(s), ${String(report.rate_limit_waited_ms)} ms, and made ${String(report.requests)} requests\n`);
    expect(report.rate_limit_waits).toBe(1);
    expect(report.download_mbps).toBeGreaterThan(0);
    expect(report.upload_mbps).toBeGreaterThan(0);
    expect(run.stderr).toMatch(/netdiag: the server's rate limit refused a request of the speed test \(429\); waiting [0-9]+ s as it asks \(Retry-After\), then /);
    expect(report.notes.some((n) => n.startsWith("the server's rate limit refused"))).toBe(true);
  });
});
