// DNS on Workers: DoH to the one fixed resolver (Knot behind the suite's DoH front), with the same
// resolver, cache and coalescing as Node, and the upstream's faults mapped as on Node.
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { expectContract } from '../support/contract.js';
import { codeOf, workerWith } from './worker.js';

const TEMPLATE = '/v1/dns/resolve';
const haveKnot = inject('dohUrl') !== '';

describe.skipIf(!haveKnot)('DNS through DoH in workerd', () => {
  it("answers Knot's records, then from the cache with a max-age that ages down", async () => {
    const worker = workerWith({ NETDIAG_RATE_LIMITS: 'dns=1000' });
    const first = await worker.send('/v1/dns/resolve?name=www.example.test&type=A', { caller: '198.51.100.60' });
    expectContract('GET', TEMPLATE, first);
    expect(first.status).toBe(200);
    const data = (first.body as { data: { response_code: string; answers: { type: string; address: string; ttl_seconds: number }[] } }).data;
    expect(data.response_code).toBe('no_error');
    expect(data.answers.map((a) => [a.type, a.address])).toEqual([['A', '192.0.2.10']]);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const cached = await worker.send('/v1/dns/resolve?name=WWW.example.test.&type=A', { caller: '198.51.100.60' });
    expect(cached.status).toBe(200);
    expect(Number(/max-age=(\d+)/.exec(cached.headers.get('cache-control') ?? '')?.[1])).toBeLessThanOrEqual(300);
  });

  it('NXDOMAIN is an answer: 200 name_error', async () => {
    const res = await workerWith().send('/v1/dns/resolve?name=missing.example.test&type=A', { caller: '198.51.100.61' });
    expectContract('GET', TEMPLATE, res);
    expect((res.body as { data: { response_code: string } }).data.response_code).toBe('name_error');
  });

  it('a bad name is 400 before any upstream query', async () => {
    const res = await workerWith().send('/v1/dns/resolve?name=a..b&type=A', { caller: '198.51.100.62' });
    expectContract('GET', TEMPLATE, res);
    expect(res.status).toBe(400);
  });

  it.each([
    ['http-503.fault.test', 503, 'upstream_unavailable'],
    ['garbage.fault.test', 502, 'upstream_invalid_response'],
    ['silent.fault.test', 504, 'upstream_timeout'],
  ])('%s: the upstream fault is %i %s', async (name, status, code) => {
    const worker = workerWith({ NETDIAG_DNS_TIMEOUT_MS: '300' });
    const res = await worker.send(`/v1/dns/resolve?name=${name}&type=A`, { caller: '198.51.100.63' });
    expectContract('GET', TEMPLATE, res);
    expect(res.status).toBe(status);
    expect(codeOf(res)).toBe(code);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('health never calls the upstream: 200 with every lookup failing', async () => {
    const worker = workerWith({ NETDIAG_DNS_UPSTREAM: 'http://127.0.0.1:9/dns-query' });
    const res = await worker.send('/v1/health');
    expect(res.status).toBe(200);
    expect((res.body as { data: { upstream_provider_health: string } }).data.upstream_provider_health).toBe('not_checked');
  });
});
