// Whole-program: `netdiag serve` as an operator runs it, and its shutdown on SIGTERM.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { send } from './support/http.js';
import { serveCli } from './support/process.js';

describe('netdiag serve', () => {
  it('serves with embedded defaults and writes structured JSON logs', async () => {
    const s = await serveCli({ NETDIAG_ACCESS_LOG: 'on' });
    try {
      const res = await send(`http://127.0.0.1:${s.port}/v1/health`, { headers: { 'User-Agent': 'DistinctiveAgent/9.9' } });
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      const lines = s.stdout().trim().split('\n');
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
      const access = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.route === '/v1/health');
      expect(access).toMatchObject({ method: 'GET', status: 200, level: 'info' });
      expect(s.stdout()).not.toContain('DistinctiveAgent');
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  it('on SIGTERM finishes the request in flight, refuses new connections and exits 0', async () => {
    const s = await serveCli();
    // A request whose head is still arriving when the signal comes is in flight.
    const socket = connect(s.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));

    await expect(send(`http://127.0.0.1:${s.port}/v1/health`)).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);

    const answer = new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
      socket.on('close', () => { resolve(data); });
    });
    socket.write('Connection: close\r\n\r\n');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain('"status":"ok"');

    expect(await s.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(s.stdout()).toContain('"msg":"draining"');
    expect(s.stdout()).toContain('"msg":"stopped"');
  });

  it('cuts off a request that outlives the drain bound and still exits 0', async () => {
    const s = await serveCli();
    const socket = connect(s.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const started = Date.now();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4_000);
    expect(took).toBeLessThan(8_000);
    socket.destroy();
  });
});
