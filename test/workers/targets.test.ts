// The speed-test targets inside workerd: the same contract as on Node, a streamed download of
// exactly the bytes asked for, an upload read to its end, and the switch.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { workerWith } from './worker.js';

describe('speed-test targets in workerd', () => {
  it('GET /__down?bytes=N streams exactly N bytes with the engine headers', async () => {
    const res = await workerWith().send('/__down?bytes=600001', { caller: '198.51.100.90' });
    expectContract('GET', '/__down', res);
    expect(res.status).toBe(200);
    expect(res.text.length).toBe(600_001);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('server-timing')).toMatch(/^cfRequestDuration;dur=/);
    expect(res.headers.get('timing-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('no-store, no-transform');
  });

  it('a bad bytes value is a 400 problem', async () => {
    const res = await workerWith().send('/__down?bytes=-3', { caller: '198.51.100.91' });
    expectContract('GET', '/__down', res);
    expect(res.status).toBe(400);
    expect((res.body as { code: string }).code).toBe('invalid_parameter');
  });

  it('POST /__up reads the body and answers 200', async () => {
    const res = await workerWith().send('/__up', { method: 'POST', body: '0'.repeat(2_000_000), caller: '198.51.100.92' });
    expectContract('POST', '/__up', res);
    expect(res.status).toBe(200);
    expect(res.headers.get('server-timing')).toMatch(/^cfRequestDuration;dur=/);
  });

  it('NETDIAG_SPEEDTEST_TARGETS=off: 404 saying so', async () => {
    const res = await workerWith({ NETDIAG_SPEEDTEST_TARGETS: 'off' }).send('/__down?bytes=1', { caller: '198.51.100.93' });
    expectContract('GET', '/__down', res);
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toContain('turned off');
  });
});

describe('GET / in workerd', () => {
  it('a client that does not ask for HTML gets the platform-verified caller and a newline', async () => {
    const res = await workerWith().send('/', { caller: '203.0.113.77', headers: { 'X-Forwarded-For': '192.0.2.1' } });
    expectContract('GET', '/', res);
    expect(res.text).toBe('203.0.113.77\n');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('a browser gets the page with the address in it and a policy that forbids other origins', async () => {
    const res = await workerWith().send('/', { caller: '203.0.113.78', headers: { Accept: 'text/html,application/xhtml+xml' } });
    expectContract('GET', '/', res);
    expect(res.text).toContain('<output id="address">203.0.113.78</output>');
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
  });
});
