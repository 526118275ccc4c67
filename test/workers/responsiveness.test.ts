// The responsiveness endpoints (draft-ietf-ippm-responsiveness) inside workerd: the configuration
// on the request's own origin, the one-byte and the 8 GiB objects, the upload, and the switch.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { workerWith } from './worker.js';

describe('/.well-known/nq in workerd', () => {
  it('answers the configuration with both key sets on the request\'s origin', async () => {
    const res = await workerWith().send('/.well-known/nq', { caller: '198.51.100.120' });
    expectContract('GET', '/.well-known/nq', res);
    expect(res.status).toBe(200);
    const urls = (res.body as { version: number; urls: Record<string, string> }).urls;
    expect((res.body as { version: number }).version).toBe(1);
    expect(urls.small_download_url).toBe('https://netdiag.test/nq/small');
    expect(urls.large_https_download_url).toBe('https://netdiag.test/nq/large');
    expect(urls.https_upload_url).toBe('https://netdiag.test/nq/upload');
  });

  it('the small object is one byte; the large one declares 8 GiB and streams while it is read; neither is coded', async () => {
    const small = await workerWith().send('/nq/small', { caller: '198.51.100.121', headers: { 'Accept-Encoding': 'gzip' } });
    expectContract('GET', '/nq/small', small);
    expect([small.status, small.text.length, small.headers.get('content-encoding')]).toEqual([200, 1, null]);
    const large = await workerWith().open('/nq/large', { caller: '198.51.100.121', headers: { 'Accept-Encoding': 'gzip' } });
    expect([large.status, large.headers.get('content-length'), large.headers.get('content-encoding')]).toEqual([200, String(8 * 1024 ** 3), null]);
    const reader = (large.body as ReadableStream<Uint8Array> | null)?.getReader();
    let read = 0;
    while (reader !== undefined && read < 5_000_000) {
      const { value } = await reader.read();
      read += value?.byteLength ?? 0;
    }
    await reader?.cancel();
    expect(read).toBeGreaterThanOrEqual(5_000_000);
  });

  it('the upload target reads a body to its end', async () => {
    const res = await workerWith().send('/nq/upload', { method: 'POST', body: '0'.repeat(3_000_000), caller: '198.51.100.122' });
    expectContract('POST', '/nq/upload', res);
    expect(res.status).toBe(200);
  });

  it('NETDIAG_SPEEDTEST_TARGETS=off: 404 saying so', async () => {
    const res = await workerWith({ NETDIAG_SPEEDTEST_TARGETS: 'off' }).send('/.well-known/nq', { caller: '198.51.100.123' });
    expectContract('GET', '/.well-known/nq', res);
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toContain('turned off');
  });
});
