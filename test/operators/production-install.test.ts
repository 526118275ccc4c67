// The production install of the README ("Production install") from a clean copy of this
// checkout (its tracked and new files, as a clone would have them): without development
// dependencies and without a build, `npm start` says how to make one; built and then pruned,
// it serves /v1/health, and /v1/ip with the embedded geo data, with no development dependency
// present: not the packages the build compiles that data from (scripts/geo/), which a
// production install never reads. The package (`npm pack`) carries no build-time code. Needs the
// npm registry (or npm's cache), as `npm ci` does.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE_PACKAGES } from '../../scripts/geo/sources.js';
import { requireCommands } from '../support/system.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ready = requireCommands('production install', ['git', 'npm'], 'git npm');
const run = promisify(execFile);
// The Node this suite runs on stands for the machine's own Node 22 (npm scripts put the project's
// `node` package first on PATH; a pruned install has none).
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
const env = { ...process.env, PATH, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
/**
 * What only the build uses: the geo data's source packages, and Ajv, which compiles the OpenAPI
 * schemas into standalone validators at build time (scripts/generate.mjs); the service imports
 * only its types.
 */
const BUILD_ONLY = [...SOURCE_PACKAGES, 'ajv', 'ajv-formats'];

function presence(dir: string, packages: readonly string[]): { name: string; present: boolean }[] {
  return packages.map((name) => ({ name, present: existsSync(join(dir, 'node_modules', name)) }));
}

/** Every file a clone of this checkout would have, plus new ones not ignored. */
async function copyCheckout(to: string): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)))) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(to, file));
  }
}

describe.skipIf(!ready)('production install: build, prune the development dependencies, start', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-production-'));
    await copyCheckout(dir);
  }, 60_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('without the development dependencies and unbuilt, npm start says how to build (exit 1, not a missing tsc)', async () => {
    await run('npm', ['ci', '--omit=dev', '--prefer-offline'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    expect(existsSync(join(dir, 'node_modules', 'typescript'))).toBe(false);
    expect(presence(dir, BUILD_ONLY)).toEqual(BUILD_ONLY.map((name) => ({ name, present: false })));
    const started = await run('npm', ['start'], { cwd: dir, env: { ...env, PORT: '0', HOST: '127.0.0.1' } }).then(
      () => ({ code: 0, stderr: '' }),
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('dist/ is not built, and this install has no compiler');
    expect(started.stderr).toContain('npm ci && npm run build && npm prune --omit=dev');
  }, 240_000);

  it('built, then pruned: no development dependency left, and npm start serves /v1/health and /v1/ip with the embedded data', async () => {
    await run('npm', ['ci', '--prefer-offline'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    // What a build before the geo compilers moved to scripts/geo/ left in dist/: tsc never
    // deletes an output, so the build must remove those whose source is gone.
    mkdirSync(join(dir, 'dist', 'runtime', 'node', 'geo'), { recursive: true });
    for (const stale of ['city-compile.js', 'city-compile.js.map']) writeFileSync(join(dir, 'dist', 'runtime', 'node', 'geo', stale), '// compiled from a source since removed\n');
    await run('npm', ['run', 'build'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    await run('npm', ['prune', '--omit=dev'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    const dev = ['typescript', 'vitest', 'esbuild', 'wrangler', 'playwright-core', 'node', '@cloudflare/speedtest', ...BUILD_ONLY];
    expect(presence(dir, dev)).toEqual(dev.map((name) => ({ name, present: false })));
    const runtime = ['commander', 'pino', 'prom-client', 'maxmind'];
    expect(presence(dir, runtime)).toEqual(runtime.map((name) => ({ name, present: true })));

    // What a small box must hold (issue 42): what the server runs from, built and pruned, at most
    // 100 MB (79.7 MB measured: dist/ 67.1 MB, node_modules/ 12.7 MB).
    const { stdout: du } = await run('du', ['-s', '-B1', join(dir, 'dist'), join(dir, 'node_modules')], { env });
    const installed = du.trim().split('\n').reduce((sum, row) => sum + Number(row.split('\t')[0]), 0);
    expect(installed / 1e6).toBeLessThan(100);

    // The package holds the run-time code and the compiled tables, and none of the build's code.
    const { stdout: packed } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    const files = (JSON.parse(packed) as { files: { path: string }[] }[]).flatMap((p) => p.files.map((f) => f.path));
    expect(files).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/runtime/node/ports/geo-lookup/city-table.js', 'dist/data/asn.bin', 'dist/data/city.bin']));
    const buildModules = readdirSync(join(ROOT, 'scripts', 'geo')).map((f) => f.replace(/\.ts$/, '.js'));
    expect(buildModules).toContain('city-compile.js');
    expect(files.filter((f) => f.startsWith('scripts/') || buildModules.some((m) => f.endsWith(`/${m}`) || f.endsWith(`/${m}.map`)))).toEqual([]);

    const child = spawn('npm', ['start'], {
      cwd: dir,
      env: { ...env, PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_EVENTS_SINK: 'none' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        child.once('exit', (code) => { reject(new Error(`npm start exited with ${String(code)}: ${err}`)); });
      });
      const res = await fetch(`http://127.0.0.1:${String(port)}/v1/health`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { status: string } }).data.status).toBe('ok');
      // A public caller behind the trusted loopback proxy, located by the tables the build
      // compiled: the ASN and organisation, the city data, and the time zone filled from its
      // coordinates by a package this install does not have.
      const ip = await fetch(`http://127.0.0.1:${String(port)}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.8.8' } });
      expect(ip.status).toBe(200);
      const { data } = (await ip.json()) as { data: { address: string; network: { asn: number | null; organization: string | null }; location: { country_code: string | null; timezone: string | null } } };
      expect(data.address).toBe('8.8.8.8');
      expect(data.network.asn).toBe(15169);
      expect(data.network.organization).toMatch(/google/i);
      expect(data.location.country_code).toBe('US');
      expect(data.location.timezone).toBe('America/Los_Angeles');
      // The event validator was compiled from the OpenAPI schema at build time: no Ajv needed to run it.
      const post = (body: unknown) => fetch(`http://127.0.0.1:${String(port)}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post({ event: 'speed_test_started', event_id: randomUUID(), properties: { source: 'web' } })).status).toBe(202);
      const refused = await post({ event: 'speed_test_started', event_id: 'session-42', properties: { source: 'web' } });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { detail: string }).detail).toContain('event_id');
      // The build was current: nothing was compiled, nor said to be stale.
      expect(err).not.toContain('no compiler');
    } finally {
      // npm runs the server under a shell: stop the whole group.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  }, 400_000);
});
