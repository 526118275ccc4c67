// The client alone, as a user installs it: `npm run pack:client` makes netdiag-client's tarball,
// which must stay under 1 MB; npm installs it offline, with an empty cache, into an empty folder
// (it has no dependencies, so it needs no registry); and the installed `netdiag` runs against a
// real server with Knot as its DNS upstream, on the Node this suite runs on (22) and on the
// system's Node 20 (CI's, .ci/run), each put first on PATH as a user's would be, `netdiag monitor`
// and its SQLite history included (on Node 20 through the WebAssembly SQLite the package carries).
// It holds no geo data and offers no server.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnot, type Knot } from '../support/knot.js';
import { runLinesOf, until } from '../support/monitor-process.js';
import { runProcess, type Finished } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TARBALL = join(ROOT, 'dist', 'client', `netdiag-client-${VERSION}.tgz`);
const ready = requireCommands('client package', ['knotd', 'npm'], 'knot npm');

/** The major version of the Node at `path`. */
const majorOf = (path: string): number => Number(spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.split('.')[0]);

/**
 * The Nodes to run the installed command on: this suite's (22) and the first Node 20 on PATH.
 * Node 20 is the package's floor (`engines`); CI's system Node is one, so there its absence fails.
 */
function nodes(): { path: string; major: number }[] {
  const found = [process.execPath];
  const node20 = (process.env.PATH ?? '')
    .split(':')
    .map((dir) => join(dir, 'node'))
    .find((path) => existsSync(path) && majorOf(path) === 20);
  if (node20 !== undefined) found.push(node20);
  else if (process.env.CI === 'true') throw new Error('client package: no Node 20 on PATH to run the installed client on; CI requires it (.ci/run)');
  else process.stderr.write('\n*** SKIPPED client package on Node 20: no Node 20 on PATH ***\n\n');
  return found.map((path) => ({ path, major: majorOf(path) }));
}

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile()).sort();

describe.skipIf(!ready)('netdiag-client: packed alone, installed offline from its tarball, run against a real server', () => {
  let knot: Knot;
  let server: TestServer;
  let dir: string;
  let packOutput: string;

  beforeAll(async () => {
    knot = await startKnot();
    server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'ip=100000,dns=100000,speedtest=100000' });
    // The npm script as a developer runs it (it builds first only when a source changed).
    ({ stdout: packOutput } = await run('npm', ['run', 'pack:client'], { cwd: ROOT, env: { ...process.env, npm_config_update_notifier: 'false' } }));
    dir = mkdtempSync(join(tmpdir(), 'netdiag-client-install-'));
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'client-install-check', version: '1.0.0', private: true })}\n`);
    // Offline, with a cache of its own that starts empty: nothing can come from a registry or a
    // cache, so the tarball alone must be enough. npm's own settings from the environment (an
    // `npm test` run sets some) are left out.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--cache', join(dir, '.npm-cache'), TARBALL], { cwd: dir, env: { ...env, npm_config_update_notifier: 'false' } });
  }, 180_000);

  afterAll(async () => {
    await server.close();
    await knot.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The installed `netdiag`, run as its shebang runs it: by the first `node` on PATH, here `node`. */
  function netdiag(node: string, args: string[], timeoutMs = 30_000): Promise<Finished> {
    return runProcess(join(dir, 'node_modules', '.bin', 'netdiag'), args, { PATH: `${dirname(node)}:${process.env.PATH ?? ''}` }, timeoutMs);
  }

  it('the tarball is under 1 MB, and the script says its size', () => {
    const size = statSync(TARBALL).size;
    expect(size).toBeLessThan(1_000_000);
    const said = new RegExp(`^dist/client/netdiag-client-${VERSION.replace(/\./g, '\\.')}\\.tgz: ([\\d.]+) kB packed`, 'm').exec(packOutput);
    // Said in kB to a tenth: within 50 bytes.
    expect(Math.abs(Number(said?.[1]) * 1000 - size)).toBeLessThanOrEqual(50);
  });

  it("the installed package is the one bundled file, SQLite's WebAssembly, its README and licences: no geo data, no dependency", () => {
    const installed = join(dir, 'node_modules', 'netdiag-client');
    // Nothing else: in particular no dist/data/ tables (.bin) or .mmdb files, and no server module.
    expect(filesUnder(installed)).toEqual(['LICENSE', 'README.md', 'THIRD-PARTY-LICENSES.md', 'netdiag.mjs', 'node-sqlite3-wasm.wasm', 'package.json']);
    expect(readdirSync(join(dir, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual(['netdiag-client']);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: 'netdiag-client', version: VERSION, license: 'MIT', type: 'module', engines: { node: '>=20' }, bin: { netdiag: 'netdiag.mjs' } });
    expect(manifest.dependencies).toBeUndefined();
    const readme = readFileSync(join(installed, 'README.md'), 'utf8');
    expect(readme).toContain(`npm install -g netdiag-client-${VERSION}.tgz`);
    // Each bundled package's licence travels with its code.
    const notices = readFileSync(join(installed, 'THIRD-PARTY-LICENSES.md'), 'utf8');
    for (const name of ['commander', 'cli-progress', 'undici', 'node-sqlite3-wasm']) expect(notices).toMatch(new RegExp(`^## ${name} [\\d.]+ \\(MIT\\)$`, 'm'));
  });

  describe.each(nodes())('on Node $major', ({ path: node, major }) => {
    it('runs on that Node, prints the version, and offers no server: serve and probe are not in its help, and asking for them is bad usage that says where they are', async () => {
      // The `node` the bin's shebang finds is this one.
      const version = spawnSync('node', ['--version'], { env: { PATH: `${dirname(node)}:${process.env.PATH ?? ''}` }, encoding: 'utf8' }).stdout;
      expect(version).toMatch(new RegExp(`^v${String(major)}\\.`));
      expect(await netdiag(node, ['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
      const help = await netdiag(node, ['--help']);
      expect(help.code).toBe(0);
      const commands = [...help.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]);
      expect(commands).toEqual(['ip', 'dns', 'latency', 'speedtest', 'rpm', 'config', 'servers', 'watch', 'monitor', 'help']);
      for (const args of [['serve'], ['probe'], ['serve', '--help'], ['serve', '--port', '9999']]) {
        const asked = await netdiag(node, args);
        expect({ args, code: asked.code }).toEqual({ args, code: 2 });
        expect(asked.stdout).toBe('');
        expect(asked.stderr).toContain(`netdiag ${String(args[0])} is not in netdiag-client, which has the client commands only; the servers are in the netdiag package`);
      }
    });

    it('ip and ip -4: the caller as the server sees it', async () => {
      const ip = await netdiag(node, ['ip', '--url', server.url]);
      expect(ip.code, ip.stderr).toBe(0);
      expect(ip.stdout).toMatch(/^address +127\.0\.0\.1$/m);
      expect(ip.stdout).toMatch(/^version +IPv4$/m);
      // -4 connects through the bundled undici's Agent, which the plain request does not use.
      const json = await netdiag(node, ['ip', '-4', '--json', '--url', server.url]);
      expect(json.code, json.stderr).toBe(0);
      expect((JSON.parse(json.stdout) as { address: string; ip_version: string })).toMatchObject({ address: '127.0.0.1', ip_version: 'ipv4' });
    });

    it('monitor: runs a dns check against the server and records it in its SQLite history, which monitor history --json reads (node:sqlite on 22, the bundled WebAssembly SQLite on 20)', async () => {
      const database = join(dir, `monitor-${String(major)}.db`);
      const config = join(dir, `monitor-${String(major)}.yaml`);
      // Once a minute (the least the monitor allows), at the second five seconds from now, with no
      // spread: the first run comes within seconds. No page, no alerts.
      const second = (new Date().getSeconds() + 5) % 60;
      writeFileSync(config, `servers: [${server.url}]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: answer\n    run: dns\n    query: www.example.test\n    cron: "${String(second)} * * * * *"\n    spread: 0s\n    expect: { response_code: "= no_error" }\n`);
      const empty = await netdiag(node, ['monitor', 'history', '--config', config]);
      expect(empty.code, empty.stderr).toBe(0);
      expect(empty.stdout).toBe(`no runs recorded in ${database}\n`);

      const monitor = spawn(join(dir, 'node_modules', '.bin', 'netdiag'), ['monitor', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, HOME: dir } });
      const lines: string[] = [];
      monitor.stderr.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter((l) => l !== '')));
      try {
        // A minute and more: the second named may pass while the monitor starts, and come again.
        await until('a recorded run', () => runLinesOf(lines, 'answer').length >= 1 || monitor.exitCode !== null, 70_000, lines);
      } finally {
        monitor.kill('SIGTERM');
        if (monitor.exitCode === null) await once(monitor, 'exit');
      }
      expect(monitor.exitCode, lines.join('\n')).toBe(0);
      expect(runLinesOf(lines, 'answer')[0]).toContain('192.0.2.10');

      const history = await netdiag(node, ['monitor', 'history', '--json', '--config', config]);
      expect(history.code, history.stderr).toBe(0);
      const runs = JSON.parse(history.stdout) as { check: string; server: string; ok: boolean; error: string | null; breaches: string[]; figures: Record<string, unknown>; source: string }[];
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(runs[0]).toMatchObject({ check: 'answer', server: server.url, ok: true, error: null, breaches: [], figures: { response_code: 'no_error', answers: '192.0.2.10', answer_count: 1 }, source: 'monitor' });
      // Which SQLite wrote it, by the journal each keeps (sqlite-driver.ts): read here by node:sqlite.
      const raw = new DatabaseSync(database, { readOnly: true });
      expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: major >= 22 ? 'wal' : 'delete' });
      raw.close();
    }, 90_000);

    it('dns: Knot\'s answers through the server\'s resolver', async () => {
      const a = await netdiag(node, ['dns', 'www.example.test', '--url', server.url]);
      expect(a.code, a.stderr).toBe(0);
      expect(a.stdout).toMatch(/^www\.example\.test A: no_error$/m);
      expect(a.stdout).toMatch(/^www\.example\.test +A +\d+ +192\.0\.2\.10$/m);
      const mx = await netdiag(node, ['dns', 'example.test', 'MX', '--url', server.url]);
      expect(mx.stdout).toMatch(/^example\.test +MX +\d+ +10 mail\.example\.test$/m);
    });

    it('speedtest --mode light: download and upload in Mbit/s above zero, latency and jitter', async () => {
      const speed = await netdiag(node, ['speedtest', '--mode', 'light', '--no-analytics', '--no-packet-loss', '--url', server.url], 60_000);
      expect(speed.code, speed.stderr).toBe(0);
      const shown = (name: string) => Number(new RegExp(`^${name} +([\\d.]+) Mbps (sustained \\(burst: [^;]+; |\\()4 streams[,;] [^)]+\\)$`, 'm').exec(speed.stdout)?.[1]);
      expect(shown('download')).toBeGreaterThan(0);
      expect(shown('upload')).toBeGreaterThan(0);
      expect(speed.stdout).toMatch(/^latency +[\d.]+ ms$/m);
      expect(speed.stdout).toMatch(/^jitter +[\d.]+ ms$/m);
      expect(speed.stdout).toMatch(/^took +[\d.]+ s, \d+ requests \(light mode\)$/m);
    }, 60_000);

    it('watch --count 2: two polls of the server as JSON lines (piped), the summary on standard error', async () => {
      const watch = await netdiag(node, ['watch', '--count', '2', '--interval', '1', '--url', server.url]);
      expect(watch.code, watch.stderr).toBe(0);
      const polls = watch.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { target: string; rtt_ms: number | null; status: string });
      expect(polls.map((p) => [p.target, p.status])).toEqual([['server', 'ok'], ['server', 'ok']]);
      for (const p of polls) expect(p.rtt_ms).toBeGreaterThan(0);
      expect(watch.stderr).toMatch(/^server: 2 polls, 2 answered, 0 failed \(0\.0% lost\), 0 limited; /m);
    });
  });
});
