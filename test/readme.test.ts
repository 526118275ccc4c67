// The README as a stranger reads it: every `$ curl` example of its tour is run, as written, against
// the deployment `npm run tour` starts (scripts/tour.mjs: Knot as the DNS upstream, a probe as
// weur, the loopback proxy trusted), and its output compared with what the README shows; so is the
// CLI example. curl's --connect-to sends `localhost:8080` to the test's port and leaves the URL (and so
// the Host, which problem `type` URIs are built from) as the README writes it.
//
// Compared as JSON when the README shows JSON (laid out to be read, where curl prints /v1/ answers on
// one line and /json a field a line), as text otherwise. Normalised on both sides, because they differ on every request and are not facts of
// the README: `request_id`, `requested_at` (a fresh id and the time), and `edge_to_region_rtt_ms`
// (a round trip on this machine). A cached DNS answer's TTL may read up to the seconds since the
// tour started below the README's, never above (withCachedTtls: the cache counts it down, and the
// CLI's example asks what a curl example asked before it; on a slow runner the CLI read 299).
// Everything else must match.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './support/process.js';
import { requireCommands } from './support/system.js';
import { eventually, freePort } from './support/wait.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ready = requireCommands('README examples', ['knotd', 'curl'], 'knot curl');
const browserReady = ready && requireCommands("README tour's page", ['chromium'], 'chromium');

interface Example {
  command: string;
  shown: string;
}

/** The `$ curl` and `$ npx netdiag` lines of the README's console blocks, each with the lines shown after it. */
function examples(): Example[] {
  const found: Example[] = [];
  for (const block of README.matchAll(/```console\n([^]*?)```/g)) {
    let current: Example | undefined;
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.startsWith('$ ')) {
        current = { command: line.slice(2), shown: '' };
        if (/^(curl|npx netdiag) /.test(current.command)) found.push(current);
      } else if (current !== undefined) {
        current.shown += `${line}\n`;
      }
    }
  }
  return found;
}

const VARYING = new Set(['request_id', 'requested_at', 'edge_to_region_rtt_ms']);

/** A JSON value with the varying fields replaced by a mark, wherever they are. */
function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VARYING.has(k) ? '(varies)' : normalised(v)]));
}

function comparable(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return normalised(JSON.parse(trimmed));
  return trimmed;
}

/**
 * A DNS answer's TTL as the tour answered it, or as the README shows it where the difference is
 * the cache counting down: the resolver's cache gives a cached answer with its TTL less the whole
 * seconds it has been held (the spec's TTL-aware cache), and the README's examples ask the same
 * name more than once, so a later one may read 299 where the README shows 300. Held to at most
 * `heldSeconds` (the time since the tour started) below the README's, never above it.
 */
function ttlCountedDown(actual: number, shown: number, heldSeconds: number): number {
  return shown - actual >= 0 && shown - actual <= heldSeconds ? shown : actual;
}

/** `actual` with each ttl_seconds (JSON) or TTL column (the CLI's table) read through ttlCountedDown against `shown`. */
function withCachedTtls(actual: unknown, shown: unknown, heldSeconds: number): unknown {
  if (typeof actual === 'string' && typeof shown === 'string') {
    const shownLines = shown.split('\n');
    const lines = actual.split('\n');
    const column = lines.find((l) => /\bTTL\b/.test(l))?.split(/\s+/).indexOf('TTL') ?? -1;
    if (column < 0) return actual;
    return lines
      .map((line, i) => {
        const parts = line.split(/(\s+)/);
        const shownParts = (shownLines[i] ?? '').split(/(\s+)/);
        const [mine, theirs] = [Number(parts[2 * column]), Number(shownParts[2 * column])];
        if (!Number.isInteger(mine) || !Number.isInteger(theirs)) return line;
        parts[2 * column] = String(ttlCountedDown(mine, theirs, heldSeconds));
        return parts.join('');
      })
      .join('\n');
  }
  if (Array.isArray(actual) && Array.isArray(shown)) return actual.map((v, i) => withCachedTtls(v, shown[i], heldSeconds));
  if (typeof actual !== 'object' || actual === null || typeof shown !== 'object' || shown === null) return actual;
  const theirs = shown as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(actual).map(([k, v]) => {
      const t = theirs[k];
      return [k, k === 'ttl_seconds' && typeof v === 'number' && typeof t === 'number' ? ttlCountedDown(v, t, heldSeconds) : withCachedTtls(v, t, heldSeconds)];
    }),
  );
}

/** The README's shell line as argv (single-quoted arguments, as the README writes them). */
function argv(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

describe('README.md', () => {
  it('is at most 350 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(350);
  });

  it('names no path or document outside the repository in README.md, docs/, openapi/, src/, web/, test/, scripts/ or bench/', () => {
    // A clone has none of them: the project's decisions are stated in docs/, its contract in
    // openapi/. The one exception is where the MaxMind test databases are looked for (README, Tests).
    // (`../shared/` followed by what that outside folder holds.)
    const outside = /\.\.\/shared\/(?:spec\/|fixtures\/(?!maxmind\/)|SPEC-NOTES|ARCHITECTURE)|SPEC-NOTES|ARCHITECTURE\.md|network-api-v1/;
    const offenders: string[] = [];
    const visit = (path: string) => {
      if (statSync(path).isDirectory()) {
        for (const entry of readdirSync(path)) visit(join(path, entry));
      } else if (path !== fileURLToPath(import.meta.url) && outside.test(readFileSync(path, 'utf8'))) {
        offenders.push(path.slice(ROOT.length));
      }
    };
    for (const path of ['README.md', 'docs', 'openapi', 'src', 'web', 'test', 'scripts', 'bench']) visit(join(ROOT, path));
    expect(offenders).toEqual([]);
  });

  it("docs/operations.md shows each file of docs/proxies/ exactly as the proxy suites run it", () => {
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    for (const file of readdirSync(join(ROOT, 'docs', 'proxies'))) {
      expect(operations, file).toContain(`\n${readFileSync(join(ROOT, 'docs', 'proxies', file), 'utf8').trimEnd()}\n\`\`\``);
    }
  });

  it('shows its tour with examples to run', () => {
    expect(examples().filter((e) => e.command.startsWith('curl')).length).toBeGreaterThanOrEqual(6);
  });
});

describe.skipIf(!ready)("README.md's tour, run against the deployment `npm run tour` starts", () => {
  let tour: ChildProcess;
  let port: number;
  let pageUrl: string;
  let tourStartedAt: number;

  beforeAll(async () => {
    // The script `npm run tour` runs, on free ports rather than 8080 and 8081.
    tourStartedAt = Date.now();
    tour = spawn(process.execPath, [join(ROOT, 'scripts', 'tour.mjs'), '--port', String(await freePort()), '--page-port', String(await freePort())], { stdio: ['ignore', 'ignore', 'pipe'] });
    [port, pageUrl] = await new Promise<[number, string]>((resolve, reject) => {
      let said = '';
      tour.stderr?.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        const ready = /ready on http:\/\/localhost:(\d+)/.exec(said);
        const open = /open (http:\/\/\S+) in a browser/.exec(said);
        if (ready !== null && open !== null) resolve([Number(ready[1]), open[1] ?? '']);
      });
      tour.on('exit', (code) => {
        reject(new Error(`the tour exited with ${String(code)}: ${said}`));
      });
    });
  }, 60_000);

  afterAll(async () => {
    if (tour.exitCode !== null) return;
    tour.kill('SIGTERM');
    await once(tour, 'exit');
  });

  it.skipIf(!browserReady)('the URL it prints for a browser opens the page in Chromium with the connection section filled', async () => {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    try {
      const page = await browser.newPage();
      // As printed (localhost), not rewritten: the line is what a person copies.
      const res = await page.goto(pageUrl);
      expect(res?.status()).toBe(200);
      await expect.poll(() => page.textContent('#connection [data-field="ip_version"]'), { timeout: 15_000 }).toMatch(/^IPv[46]$/);
      expect(await page.textContent('#address')).toMatch(/^(127\.0\.0\.1|::1)$/);
      expect(await page.isVisible('#connection-error')).toBe(false);
    } finally {
      await browser.close();
    }
  });

  it.each(examples().map((e) => [e.command, e] as const))('$ %s', async (_command, example) => {
    const args = argv(example.command);
    let stdout: string;
    if (args[0] === 'curl') {
      ({ stdout } = await run('curl', ['--connect-to', `localhost:8080:127.0.0.1:${String(port)}`, ...args.slice(1)]));
    } else {
      const cliArgs = args.slice(2).map((a) => (a === 'http://localhost:8080' ? `http://127.0.0.1:${String(port)}` : a));
      ({ stdout } = await run(process.execPath, [CLI, ...cliArgs], { env: { PATH: process.env.PATH ?? '' } }));
    }
    const shown = comparable(example.shown);
    const heldSeconds = Math.ceil((Date.now() - tourStartedAt) / 1000);
    expect(withCachedTtls(comparable(stdout), shown, heldSeconds)).toEqual(shown);
  });
});

/** The pids below `pid` (children, theirs, ...), read from /proc as they are now. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // It ended while the list was read.
    }
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of parentOf) {
      if (ppid !== parent) continue;
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const commandLine = (pid: number): string[] => readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').split('\0');

interface RunningTour {
  npm: ChildProcess;
  said: () => string;
}

/** `npm run tour` with `args`, as a person types it (without its build step: the suite has built), once it says it is ready. */
async function npmTour(args: string[]): Promise<RunningTour> {
  // The project's Node first on PATH, as `npx` and npm scripts put it; --ignore-scripts skips only `pretour` (the build check).
  const PATH = `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
  const npm = spawn('npm', ['run', 'tour', '--ignore-scripts', ...args], { cwd: ROOT, env: { ...process.env, PATH }, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  npm.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    npm.stderr.on('data', () => {
      if (/open http:\/\/\S+ in a browser/.test(said)) resolve();
    });
    npm.on('exit', (code) => {
      reject(new Error(`npm run tour exited with ${String(code)}: ${said}`));
    });
  });
  return { npm, said: () => said };
}

/** Kills whatever of `pids` is left and removes `folder`: a failed test leaves nothing behind either. */
function sweep(pids: number[], folder: string | undefined): void {
  for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
}

/**
 * Starts `npm run tour` with `args`, checks that it serves on `port` and `pagePort` (the API's
 * health, and the page), then `stop`s it and expects everything it started (its script, Knot, the
 * probe, both servers) gone, and its scratch folder (where Knot's configuration is) removed.
 */
async function expectServedThenStopped(args: string[], port: number, pagePort: number, stop: (tour: RunningTour, pids: number[]) => void): Promise<void> {
  const tour = await npmTour(args);
  const npmPid = tour.npm.pid ?? 0;
  const pids = [npmPid, ...descendants(npmPid)];
  const names = pids.map((pid) => commandLine(pid).join(' '));
  const knot = names.find((n) => /knotd -c /.test(n));
  const scratch = knot === undefined ? undefined : dirname(/-c (\S+)/.exec(knot)?.[1] ?? '/nonexistent/x');
  try {
    expect(tour.said()).toContain(`tour: ready on http://localhost:${String(port)} `);
    expect(tour.said()).toContain(`tour: open http://localhost:${String(pagePort)}/ in a browser`);
    expect((await fetch(`http://127.0.0.1:${String(port)}/v1/health`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${String(pagePort)}/`)).status).toBe(200);
    expect(names.some((n) => /scripts\/tour\.mjs/.test(n))).toBe(true);
    expect(names.filter((n) => /dist\/cli\/main\.js (serve|probe)/.test(n))).toHaveLength(3);
    expect(scratch !== undefined && existsSync(scratch)).toBe(true);
    stop(tour, pids);
    // The servers drain for up to 5 s (docs/api.md, "Shutdown"); the tour waits for them, then removes its folder.
    expect(await eventually(() => !pids.some(alive) && !existsSync(scratch ?? '/'), 15_000, 100), `left: ${pids.filter(alive).join(' ')}`).toBe(true);
  } finally {
    sweep(pids, scratch);
  }
}

describe.skipIf(!ready)('`npm run tour`: the ports asked for, and nothing left after a SIGTERM', () => {
  const signalNpm = (tour: RunningTour) => tour.npm.kill('SIGTERM');

  it("`npm run tour --port N --page-port M`, as the README writes it, serves on N and M; a SIGTERM to npm stops every process and removes the scratch folder", async () => {
    const [port, pagePort] = [await freePort(), await freePort()];
    await expectServedThenStopped(['--port', String(port), '--page-port', String(pagePort)], port, pagePort, signalNpm);
  }, 60_000);

  it('`npm run tour --port=N --page-port=M` serves on N and M too, and a SIGTERM to npm stops it all', async () => {
    const [port, pagePort] = [await freePort(), await freePort()];
    await expectServedThenStopped([`--port=${String(port)}`, `--page-port=${String(pagePort)}`], port, pagePort, signalNpm);
  }, 60_000);

  it('`npm run tour -- --port N --page-port M` serves on N and M; a SIGTERM to the tour script itself stops everything too', async () => {
    const [port, pagePort] = [await freePort(), await freePort()];
    await expectServedThenStopped(['--', '--port', String(port), '--page-port', String(pagePort)], port, pagePort, (_tour, pids) => {
      const script = pids.find((pid) => commandLine(pid).some((a) => a.endsWith('scripts/tour.mjs')));
      process.kill(script ?? 0, 'SIGTERM');
    });
  }, 60_000);

  it('a port that is not one is refused before anything starts: exit 2 naming the option and the value', async () => {
    const PATH = `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
    const bad = async (args: string[]) => {
      const child = spawn('npm', ['run', 'tour', '--ignore-scripts', ...args], { cwd: ROOT, env: { ...process.env, PATH }, stdio: ['ignore', 'ignore', 'pipe'] });
      let said = '';
      child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
      // A tour that starts after all is stopped, not left running.
      const started = setTimeout(() => {
        sweep([child.pid ?? 0, ...descendants(child.pid ?? 0)], undefined);
      }, 20_000);
      const [code] = (await once(child, 'exit')) as [number | null];
      clearTimeout(started);
      return { code, said };
    };
    const npmSpelling = await bad(['--port', 'abc', '--page-port', '8081']);
    expect(npmSpelling.code).toBe(2);
    expect(npmSpelling.said).toContain('tour: --port must be a port number from 1 to 65535, not "abc"');
    const dashed = await bad(['--', '--port', '21080', '--page-port', '70000']);
    expect(dashed.code).toBe(2);
    expect(dashed.said).toContain('tour: --page-port must be a port number from 1 to 65535, not "70000"');
    expect(dashed.said).not.toContain('ready on');
  }, 60_000);
});
