// Whole-program: `netdiag serve` as an operator runs it, and its shutdown on SIGTERM.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { send } from './support/http.js';
import { serveCli } from './support/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

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

  it('exits 0 on SIGTERM even when the reader of its log pipe is gone (EPIPE)', async () => {
    const s = await serveCli({ NETDIAG_ACCESS_LOG: 'on' });
    // As `netdiag serve | head -c 10`: the reader takes a little and goes away.
    s.child.stdout?.destroy();
    for (let i = 0; i < 3; i++) expect((await send(`http://127.0.0.1:${String(s.port)}/v1/health`)).status).toBe(200);
    const started = Date.now();
    s.child.kill('SIGTERM');
    const code = await Promise.race([s.exited, new Promise<string>((r) => setTimeout(() => { r('still running'); }, 6_000))]);
    s.child.kill('SIGKILL');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('npm start builds only when it must', () => {
  it('builds a fresh tree, skips an unchanged one, and builds again after a source changes', { timeout: 90_000 }, () => {
    const tree = mkdtempSync(join(tmpdir(), 'netdiag-build-'));
    try {
      for (const entry of ['src', 'scripts', 'openapi', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) cpSync(join(ROOT, entry), join(tree, entry), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
      const build = () => spawnSync(process.execPath, [join(tree, 'scripts', 'build-if-stale.mjs')], { encoding: 'utf8' });
      const built = join(tree, 'dist', 'app.js');

      expect(build().status).toBe(0);
      const first = statSync(built).mtimeMs;
      // Unchanged sources: nothing is compiled (the output keeps its time).
      expect(build().status).toBe(0);
      expect(statSync(built).mtimeMs).toBe(first);
      // A source changed since the last build: compiled again.
      appendFileSync(join(tree, 'src', 'app.ts'), '// a change after the build\n');
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(tree, 'src', 'app.ts'), later, later);
      expect(build().status).toBe(0);
      expect(readFileSync(built, 'utf8')).toContain('// a change after the build');
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
