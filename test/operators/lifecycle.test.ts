// Whole-program: `netdiag serve` as an operator runs it, and its shutdown on SIGTERM.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { send } from '../support/http.js';
import { serveCli, type Serving } from '../support/process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What SIGTERM gives requests in flight before cutting them off: DRAIN_GRACE_MS in
 * src/cli/servers/server-process.ts (README: "in-flight requests get 5 s"). Every bound below is a
 * multiple of it; none depends on how fast this machine is.
 */
const GRACE_MS = 5_000;

/** Resolves with the first log line `match` accepts, once the process writes it; rejects if its stdout closes first. */
function logLine(s: Serving, match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  // Whole lines only (a chunk can end mid-line); that every line is JSON is asserted elsewhere.
  const parse = (line: string): Record<string, unknown> | undefined => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const found = () => s.stdout().split('\n').slice(0, -1).map(parse).find((e) => e !== undefined && match(e));
  return new Promise((resolve, reject) => {
    const check = () => {
      const entry = found();
      if (entry === undefined) return;
      s.child.stdout?.off('data', check);
      resolve(entry);
    };
    const ended = () => {
      // Everything the process wrote is in once its stdout has closed: a line missing now never comes.
      const entry = found();
      if (entry === undefined) reject(new Error(`stdout closed without the log line:\n${s.stdout()}`));
      else resolve(entry);
    };
    const stdout = s.child.stdout;
    if (stdout === null || stdout.closed) {
      ended();
      return;
    }
    stdout.on('data', check);
    stdout.once('close', ended);
    check();
  });
}

/**
 * Opens a connection and sends, in one write, a whole GET and then the head of a second one that
 * never ends. The server reads both in one pass, so once the first is answered the second has
 * begun: a request in flight, known from an event rather than from waiting a while (HTTP/1.1
 * pipelining, RFC 9112 §9.3.2). Resolves with the socket and the promise of everything it
 * receives until it closes.
 */
async function secondRequestInFlight(port: number): Promise<{ socket: Socket; closed: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((r) => socket.once('connect', r));
  let data = '';
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => { resolve(data); });
  });
  const firstAnswered = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
      const end = data.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(data.slice(0, end));
      if (end >= 0 && length !== null && data.length >= end + 4 + Number(length[1])) resolve();
    });
    void closed.then(() => { reject(new Error(`closed before the first answer: ${data}`)); });
  });
  socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  await firstAnswered;
  return { socket, closed };
}

/** The status lines in what a connection received (health bodies hold no such text). */
const responses = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];

describe('netdiag serve', () => {
  it('serves with embedded defaults and writes structured JSON logs', async () => {
    const s = await serveCli({ NETDIAG_ACCESS_LOG: 'on' });
    try {
      const res = await send(`http://127.0.0.1:${s.port}/v1/health`, { headers: { 'User-Agent': 'DistinctiveAgent/9.9' } });
      expect(res.status).toBe(200);
      // The access line is written when the response ends: wait for it, not for a while.
      await logLine(s, (e) => e.route === '/v1/health');
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
    const inFlight = await secondRequestInFlight(s.port);
    s.child.kill('SIGTERM');
    // The listener is closed in the same turn as this line is logged (src/cli/servers/server-process.ts).
    await logLine(s, (e) => e.msg === 'draining');

    await expect(send(`http://127.0.0.1:${s.port}/v1/health`)).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);

    inFlight.socket.write('Connection: close\r\n\r\n');
    const text = await inFlight.closed;
    const finished = performance.now();
    expect(responses(text)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(text.slice(text.lastIndexOf('HTTP/1.1 200'))).toContain('"status":"ok"');

    expect(await s.exited).toBe(0);
    // Nothing left in flight: it exits then, without sitting out the grace.
    expect(performance.now() - finished).toBeLessThan(GRACE_MS);
    expect(s.stdout()).toContain('"msg":"stopped"');
  });

  it('cuts off a request that outlives the drain bound and still exits 0', async () => {
    const s = await serveCli();
    const inFlight = await secondRequestInFlight(s.port);
    const signalled = performance.now();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const took = performance.now() - signalled;
    // Held for the grace (the process's timer starts after the signal; 100 ms for reading two
    // clocks), then cut off: the request in flight got no answer.
    expect(took).toBeGreaterThanOrEqual(GRACE_MS - 100);
    expect(took).toBeLessThan(2 * GRACE_MS);
    expect(responses(await inFlight.closed)).toHaveLength(1);
    expect(s.stdout()).toContain('"msg":"stopped"');
  });

  it('exits 0 on SIGTERM even when the reader of its log pipe is gone (EPIPE)', async () => {
    const s = await serveCli({ NETDIAG_ACCESS_LOG: 'on' });
    // As `netdiag serve | head -c 10`: the reader takes a little and goes away.
    s.child.stdout?.destroy();
    for (let i = 0; i < 3; i++) expect((await send(`http://127.0.0.1:${String(s.port)}/v1/health`)).status).toBe(200);
    const signalled = performance.now();
    s.child.kill('SIGTERM');
    const code = await Promise.race([s.exited, new Promise<string>((r) => setTimeout(() => { r('still running'); }, 2 * GRACE_MS))]);
    s.child.kill('SIGKILL');
    expect(code).toBe(0);
    // Nothing was in flight: it did not sit out the grace (nor hang on the broken pipe).
    expect(performance.now() - signalled).toBeLessThan(GRACE_MS);
  });
});

describe('npm start builds only when it must', () => {
  // Two builds of a fresh tree: 33 s for the first alone here, and past 90 s while the other
  // suites share the two cores.
  it('builds a fresh tree, skips an unchanged one, and builds again after a source changes', { timeout: 180_000 }, () => {
    const tree = mkdtempSync(join(tmpdir(), 'netdiag-build-'));
    try {
      for (const entry of ['src', 'scripts', 'openapi', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', 'LICENSE']) cpSync(join(ROOT, entry), join(tree, entry), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
      const build = () => spawnSync(process.execPath, [join(tree, 'scripts', 'build-if-stale.mjs')], { encoding: 'utf8' });
      const built = join(tree, 'dist', 'app', 'app.js');

      expect(build().status).toBe(0);
      const first = statSync(built).mtimeMs;
      // Unchanged sources: nothing is compiled (the output keeps its time).
      expect(build().status).toBe(0);
      expect(statSync(built).mtimeMs).toBe(first);
      // A source changed since the last build: compiled again.
      appendFileSync(join(tree, 'src', 'app', 'app.ts'), '// a change after the build\n');
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(tree, 'src', 'app', 'app.ts'), later, later);
      expect(build().status).toBe(0);
      expect(readFileSync(built, 'utf8')).toContain('// a change after the build');
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
