// A real authoritative DNS server for the suites: Knot DNS on loopback, with the zones in
// test/fixtures/dns, and its own query counters (mod-stats) read through knotc.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './wait.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/dns/', import.meta.url));

export interface Knot {
  port: number;
  /** Queries the server has answered so far (its own counter). */
  queries(): number;
  /** Of those, the ones that came over TCP. */
  tcpQueries(): number;
  /** Replaces the A records of `owner` (in example.test) with `address`, TTL `ttl`, through a knotc zone transaction. */
  setAddress(owner: string, address: string, ttl: number): void;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A string of `n` characters as TXT character-strings of at most 255 octets each (RFC 1035 §3.3). */
function txtStrings(n: number): string {
  const text = 'x'.repeat(n);
  const parts: string[] = [];
  for (let i = 0; i < n; i += 255) parts.push(`"${text.slice(i, i + 255)}"`);
  return parts.join(' ');
}

/** The address Knot holds for `many<i>.example.test` (1..300): each name its own. */
export const manyAddress = (i: number) => `198.18.${String(i >> 8)}.${String(i & 255)}`;

function generatedRecords(): string {
  const lines: string[] = [];
  for (let i = 1; i <= 50; i++) lines.push(`fifty IN A 198.51.100.${i}`);
  for (let i = 1; i <= 51; i++) lines.push(`fifty-one IN A 198.51.100.${i}`);
  // Many names, each with an address of its own: answers under concurrency must meet their questions.
  for (let i = 1; i <= 300; i++) lines.push(`many${String(i)} IN A ${manyAddress(i)}`);
  lines.push(`txt2048 IN TXT ${txtStrings(2048)}`);
  // Large answers for the cache's byte bound: 40 names of about 4 KiB of TXT each, and one of
  // 20 records of 2000 characters (about 40 KiB), over the TCP fallback.
  for (let i = 1; i <= 40; i++) lines.push(`big${String(i)} IN TXT ${txtStrings(2000)}`, `big${String(i)} IN TXT ${txtStrings(1999)}`);
  for (let i = 0; i < 20; i++) lines.push(`huge IN TXT ${txtStrings(2000 - i)}`);
  lines.push(`txt2049 IN TXT ${txtStrings(2049)}`);
  return `${lines.join('\n')}\n`;
}

/** Starts Knot on `port`, or on a free one. */
export async function startKnot(port?: number): Promise<Knot> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-knot-'));
  const zones = readdirSync(FIXTURES).filter((f) => f.endsWith('.zone'));
  for (const zone of zones) copyFileSync(join(FIXTURES, zone), join(dir, zone));
  writeFileSync(join(dir, 'example.test.zone'), readFileSync(join(dir, 'example.test.zone'), 'utf8') + generatedRecords());
  port ??= await freePort();
  const conf = join(dir, 'knot.conf');
  writeFileSync(
    conf,
    `server:
    rundir: "${dir}"
    listen: [ 127.0.0.1@${port} ]
    user: ${process.getuid?.() === 0 ? 'root:root' : `${String(process.getuid?.())}:${String(process.getgid?.())}`}
control:
    listen: "${join(dir, 'knot.sock')}"
database:
    storage: "${dir}"
log:
  - target: stderr
    any: error
mod-stats:
  - id: counters
    request-protocol: on
template:
  - id: default
    storage: "${dir}"
    semantic-checks: off
    global-module: mod-stats/counters
zone:
${zones.map((z) => `  - domain: ${z.replace(/\.zone$/, '')}\n    file: ${z}`).join('\n')}
`,
  );

  let child: ChildProcess | undefined;
  let base = 0;
  const stats = (): string => execFileSync('knotc', ['-c', conf, 'stats', 'mod-stats'], { encoding: 'utf8' });
  const counter = (): number => Number(/server-operation\[query\] = (\d+)/.exec(stats())?.[1] ?? 0);

  const start = async () => {
    child = spawn('knotd', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    // Ready when its control socket answers.
    for (let i = 0; i < 100; i++) {
      try {
        execFileSync('knotc', ['-c', conf, 'status'], { stdio: 'ignore' });
        return;
      } catch {
        if (child.exitCode !== null) throw new Error(`knotd exited: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`knotd did not start: ${stderr}`);
  };

  const stop = async () => {
    if (child === undefined || child.exitCode !== null) return;
    // Counters restart with the process; keep the total monotonic across restarts.
    base += counter();
    child.kill('SIGTERM');
    await once(child, 'exit');
    child = undefined;
  };

  await start();
  return {
    port,
    queries: () => base + (child === undefined ? 0 : counter()),
    tcpQueries: () => Number(/request-protocol\[tcp4\] = (\d+)/.exec(stats())?.[1] ?? 0),
    setAddress: (owner, address, ttl) => {
      const knotc = (...args: string[]) => execFileSync('knotc', ['-c', conf, ...args], { encoding: 'utf8' });
      knotc('zone-begin', 'example.test');
      try {
        knotc('zone-unset', 'example.test', owner, 'A');
        knotc('zone-set', 'example.test', owner, String(ttl), 'A', address);
        knotc('zone-commit', 'example.test');
      } catch (err) {
        knotc('zone-abort', 'example.test');
        throw err;
      }
    },
    start,
    stop,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
