// Regional probes on Workers: a Durable Object placed by location hint, and a URL probe (a real
// `netdiag probe` on loopback) as on Node.
import { exports } from 'cloudflare:workers';
import { inject, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { codeOf, workerWith } from './worker.js';

const TEMPLATE = '/v1/latency/regions/{region}/probe';
/** The Worker's own default export, reached as the platform reaches it: a request of its own. */
const entry = (exports as unknown as { default: Fetcher }).default;

describe('probes in workerd', () => {
  it('a Durable Object probe answers a measured round trip', async () => {
    const worker = workerWith({ NETDIAG_PROBES: 'weur=durable-object,apac-se=durable-object' });
    for (const region of ['weur', 'apac-se']) {
      const res = await worker.send(`/v1/latency/regions/${region}/probe`, { caller: '198.51.100.30' });
      expectContract('GET', TEMPLATE, res);
      expect(res.status).toBe(200);
      const data = (res.body as { data: { region: string; edge_to_region_rtt_ms: number; measurement_scope: string } }).data;
      expect(data.region).toBe(region);
      expect(data.edge_to_region_rtt_ms).toBeGreaterThanOrEqual(0);
      expect(data.measurement_scope).toBe('provider_edge_to_regional_probe');
    }
  });

  it('measures again on later requests: no I/O object of one request is reused by the next', async () => {
    // Through the Worker's own entry, so each call is a request of its own (wrangler.jsonc's vars
    // configure oc as a Durable Object probe): a stub kept from the first fails the second.
    for (let i = 0; i < 3; i++) {
      const res = await entry.fetch(new Request('http://netdiag.test/v1/latency/regions/oc/probe', { headers: { 'CF-Connecting-IP': '198.51.100.34' } }));
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
  });

  it('a region without a probe is 503 probe_unavailable', async () => {
    const res = await workerWith({ NETDIAG_PROBES: 'weur=durable-object' }).send('/v1/latency/regions/oc/probe', { caller: '198.51.100.31' });
    expectContract('GET', TEMPLATE, res);
    expect(res.status).toBe(503);
    expect(codeOf(res)).toBe('probe_unavailable');
  });

  it('a URL probe (netdiag probe) answers as on Node', async () => {
    const worker = workerWith({ NETDIAG_PROBES: `enam=${inject('probeUrl')}` });
    const res = await worker.send('/v1/latency/regions/enam/probe', { caller: '198.51.100.32' });
    expectContract('GET', TEMPLATE, res);
    expect(res.status).toBe(200);
    // workerd's clock moves only across I/O and in whole milliseconds, so a loopback round trip can
    // read 0; the spec allows >= 0. Reaching the probe is what the 200 shows (nothing listening is 503).
    const rtt = (res.body as { data: { edge_to_region_rtt_ms: number } }).data.edge_to_region_rtt_ms;
    expect(Number.isFinite(rtt)).toBe(true);
    expect(rtt).toBeGreaterThanOrEqual(0);
  });

  it('a URL probe with nothing listening is 503 probe_unavailable', async () => {
    const res = await workerWith({ NETDIAG_PROBES: 'enam=http://127.0.0.1:9' }).send('/v1/latency/regions/enam/probe', { caller: '198.51.100.33' });
    expect(res.status).toBe(503);
    expect(codeOf(res)).toBe('probe_unavailable');
  });
});
