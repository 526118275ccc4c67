// The speed-test targets inside workerd: the same contract as on Node, a streamed download of
// exactly the bytes asked for, an upload read to its end, and the switch.
import { describe, expect, it } from 'vitest';
import { workerWith } from './worker.js';

describe('speed-test targets in workerd', () => {
  it('GET /__down?bytes=N streams exactly N bytes with the engine headers', async () => {
    const res = await workerWith().send('/__down?bytes=600001', { caller: '198.51.100.90' });
    expect(res.status).toBe(200);
    expect(res.text.length).toBe(600_001);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('server-timing')).toMatch(/^cfRequestDuration;dur=/);
    expect(res.headers.get('timing-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('no-store, no-transform');
  });

  it('a bad bytes value is a 400 problem', async () => {
    const res = await workerWith().send('/__down?bytes=-3', { caller: '198.51.100.91' });
    expect(res.status).toBe(400);
    expect((res.body as { code: string }).code).toBe('invalid_parameter');
  });

  it('POST /__up reads the body and answers 200', async () => {
    const res = await workerWith().send('/__up', { method: 'POST', body: '0'.repeat(2_000_000), caller: '198.51.100.92' });
    expect(res.status).toBe(200);
    expect(res.headers.get('server-timing')).toMatch(/^cfRequestDuration;dur=/);
  });

  it('NETDIAG_SPEEDTEST_TARGETS=off: 404 saying so', async () => {
    const res = await workerWith({ NETDIAG_SPEEDTEST_TARGETS: 'off' }).send('/__down?bytes=1', { caller: '198.51.100.93' });
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toContain('turned off');
  });
});
