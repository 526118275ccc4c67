// The speed-test targets over real sockets: /__down sizes and bad values, /__up with
// sized and chunked bodies and bodies over the maximum, the headers the engine needs, the limit,
// and the switch that turns them off. The configuration never asks for more than they allow.
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** The engine's largest transfer in the full plan (250 MB), read from the configuration below. */
let MAX = 0;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
  text: string;
}

/** One request on its own connection; counts the body instead of keeping it. */
function send(base: string, path: string, options: { method?: string; body?: (write: (chunk: Buffer) => boolean, end: () => void) => void; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength;
        if (text.length < 2000) text += chunk.toString('latin1');
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text });
      });
      res.on('error', reject);
    });
    // A server that stops reading an oversized body and closes may reset the upload: not an error here.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    if (options.body === undefined) req.end();
    else options.body((chunk) => req.write(chunk), () => req.end());
  });
}

/** Writes `total` bytes in 1 MiB chunks, waiting for drain, then ends. */
function bytesOf(total: number) {
  return (write: (chunk: Buffer) => boolean, end: () => void): void => {
    const chunk = Buffer.alloc(1024 * 1024);
    let left = total;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.byteLength);
        left -= n;
        if (!write(n === chunk.byteLength ? chunk : chunk.subarray(0, n))) {
          setTimeout(pump, 1);
          return;
        }
      }
      end();
    };
    pump();
  };
}

describe('speed-test targets', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=1000' });
    const res = await fetch(`${server.url}/v1/speed-test/configuration`);
    const config = (await res.json()) as { data: { limits: { max_bytes_per_request: number }; modes: { measurements: { bytes_per_request?: number }[] }[] } };
    MAX = config.data.limits.max_bytes_per_request;
    // The configuration never asks for more than the targets serve.
    const asked = config.data.modes.flatMap((m) => m.measurements.map((x) => x.bytes_per_request ?? 0));
    expect(Math.max(...asked)).toBeLessThanOrEqual(MAX);
  });
  afterAll(() => server.close());

  it.each([0, 1, 65_537, 1_000_000])('GET /__down?bytes=%i sends exactly that many bytes with the engine headers', async (bytes) => {
    const res = await send(server.url, `/__down?bytes=${String(bytes)}&measId=123`);
    expect(res.status).toBe(200);
    expect(res.bytes).toBe(bytes);
    expect(res.headers['content-length']).toBe(String(bytes));
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['cache-control']).toBe('no-store, no-transform');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['server-timing']).toMatch(/^cfRequestDuration;dur=[0-9]+\.[0-9]{3}$/);
    expect(res.headers['timing-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toContain('Server-Timing');
  });

  it('sends the maximum, whole', async () => {
    const res = await send(server.url, `/__down?bytes=${String(MAX)}`);
    expect(res.status).toBe(200);
    expect(res.bytes).toBe(MAX);
  }, 60_000);

  it.each([
    ['over the maximum', () => `bytes=${String(MAX + 1)}`, 'at most'],
    ['negative', () => 'bytes=-1', 'whole number'],
    ['not a number', () => 'bytes=ten', 'whole number'],
    ['a fraction', () => 'bytes=1.5', 'whole number'],
    ['missing', () => 'measId=1', 'required'],
    ['given twice', () => 'bytes=1&bytes=2', 'once'],
  ])('a bytes value %s is a 400 problem naming it', async (_label, query, words) => {
    const res = await send(server.url, `/__down?${query()}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const problem = JSON.parse(res.text) as { code: string; detail: string };
    expect(problem.code).toBe('invalid_parameter');
    expect(problem.detail).toContain('bytes');
    expect(problem.detail).toContain(words);
  });

  it('HEAD /__down has the GET headers and no body', async () => {
    const res = await send(server.url, '/__down?bytes=5000', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('5000');
    expect(res.bytes).toBe(0);
  });

  it.each([
    ['sized', { 'Content-Type': 'text/plain;charset=UTF-8' }],
    ['chunked', { 'Content-Type': 'text/plain;charset=UTF-8', 'Transfer-Encoding': 'chunked' }],
  ])('POST /__up reads a %s body to its end and answers 200 with the engine headers', async (_label, headers) => {
    const size = 3_000_000;
    const res = await send(server.url, '/__up?bytes=3000000', { method: 'POST', headers: _label === 'sized' ? { ...headers, 'Content-Length': String(size) } : headers, body: bytesOf(size) });
    expect(res.status).toBe(200);
    expect(res.headers['server-timing']).toMatch(/^cfRequestDuration;dur=/);
    expect(res.headers['timing-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('no-store, no-transform');
  });

  it('POST /__up says when a quarter, half and three quarters of a sized body had arrived, and for a chunked one only its whole time', async () => {
    // Four 100 kB pieces 150 ms apart: the server reads each as it comes, so the quarters stand
    // about 150 ms apart and the whole body lasts about 450 ms from its first byte.
    const piece = Buffer.alloc(100_000, 0x30);
    const paced = (write: (chunk: Buffer) => boolean, end: () => void): void => {
      let sent = 0;
      const next = (): void => {
        write(piece);
        if (++sent === 4) end();
        else setTimeout(next, 150);
      };
      next();
    };
    const timings = (header: string | string[] | undefined): Record<string, number> => Object.fromEntries<number>([...String(header).matchAll(/([a-zA-Z0-9]+);dur=([0-9.]+)/g)].map((m): [string, number] => [m[1] ?? '', Number(m[2])]));
    const sized = timings((await send(server.url, '/__up', { method: 'POST', headers: { 'Content-Length': '400000' }, body: paced })).headers['server-timing']);
    const { body = NaN, body25 = NaN, body50 = NaN, body75 = NaN } = sized;
    expect(body25).toBeLessThan(100);
    for (const [later, earlier] of [[body50, body25], [body75, body50], [body, body75]] as const) expect(later - earlier).toBeGreaterThanOrEqual(120);
    const chunked = timings((await send(server.url, '/__up', { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' }, body: paced })).headers['server-timing']);
    expect(Object.keys(chunked).sort()).toEqual(['body', 'cfRequestDuration']);
    expect(chunked.body).toBeGreaterThanOrEqual(400);
  });

  it('a declared body over the maximum is 413 at once, and the connection closes', async () => {
    const res = await send(server.url, '/__up', { method: 'POST', headers: { 'Content-Length': String(MAX + 1) }, body: (_w, end) => { end(); } });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect((JSON.parse(res.text) as { code: string }).code).toBe('payload_too_large');
  });

  it('a chunked body that grows past the maximum is 413 when it does, and the connection closes', async () => {
    // curl, as an uploader in the field would be, fed one byte more than the maximum.
    const { stdout } = await promisify(execFile)('sh', ['-c', `head -c ${String(MAX + 1)} /dev/zero | curl -s -i -H 'Transfer-Encoding: chunked' --data-binary @- ${server.url}/__up`], { maxBuffer: 1 << 20 });
    expect(stdout).toMatch(/^HTTP\/1\.1 413 /m);
    expect(stdout).toMatch(/^connection: close\r$/im);
    expect(stdout).toContain('"code":"payload_too_large"');
  }, 60_000);

  it('a client that goes away mid-upload is no fault of ours: nothing logged as an error, the next upload served', async () => {
    const before = server.logs().length;
    // A page closed during its upload test: a sized body, a part of it sent, then the connection gone.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`POST /__up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\nContent-Type: text/plain\r\n\r\n`);
        socket.write(Buffer.alloc(1_000_000), () => {
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 100);
        });
      });
      socket.on('error', reject);
    });
    const next = await send(server.url, '/__up', { method: 'POST', headers: { 'Content-Length': '1000' }, body: bytesOf(1000) });
    expect(next.status).toBe(200);
    // The close reaches the server long before this; a little more time for its log line, were there one.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.logs().slice(before).filter((l) => l.level === 'error')).toEqual([]);
  });

  it('GET /__up and POST /__down are 405 with Allow', async () => {
    const up = await send(server.url, '/__up');
    expect(up.status).toBe(405);
    expect(up.headers.allow).toContain('POST');
    const down = await send(server.url, '/__down?bytes=1', { method: 'POST', body: (_w, end) => { end(); } });
    expect(down.status).toBe(405);
  });
});

describe('speed-test targets: limits and the switch', () => {
  it('a source past its speedtest limit gets 429 with Retry-After, which the engine honours', async () => {
    const server = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(server.url, '/__down?bytes=0')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await send(server.url, '/__up', { method: 'POST', body: (_w, end) => { end(); } });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-limit']).toBe('3');
    } finally {
      await server.close();
    }
  });

  it('NETDIAG_SPEEDTEST_TARGETS=off: both answer 404 saying they are off; the API is unchanged', async () => {
    const server = await startTestServer({ NETDIAG_SPEEDTEST_TARGETS: 'off' });
    try {
      for (const res of [await send(server.url, '/__down?bytes=1'), await send(server.url, '/__up', { method: 'POST', body: (_w, end) => { end(); } })]) {
        expect(res.status).toBe(404);
        expect((JSON.parse(res.text) as { detail: string }).detail).toContain('NETDIAG_SPEEDTEST_TARGETS=off');
      }
      expect((await send(server.url, '/v1/speed-test/configuration')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a bad NETDIAG_SPEEDTEST_TARGETS is refused at start-up, naming it', async () => {
    await expect(startTestServer({ NETDIAG_SPEEDTEST_TARGETS: 'maybe' })).rejects.toMatchObject({ variable: 'NETDIAG_SPEEDTEST_TARGETS', message: 'must be on or off, got "maybe"' });
  });
});
