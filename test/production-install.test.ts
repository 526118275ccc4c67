// The production install of the README ("Production install") from a clean copy of this
// checkout (its tracked and new files, as a clone would have them): without development
// dependencies and without a build, `npm start` says how to make one; built and then pruned,
// it serves /v1/health with no development dependency present. Needs the npm registry (or
// npm's cache), as `npm ci` does.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCommands } from './support/system.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ready = requireCommands('production install', ['git', 'npm'], 'git npm');
const run = promisify(execFile);
// The Node this suite runs on stands for the machine's own Node 22 (npm scripts put the project's
// `node` package first on PATH; a pruned install has none).
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
const env = { ...process.env, PATH, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

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
    const started = await run('npm', ['start'], { cwd: dir, env: { ...env, PORT: '0', HOST: '127.0.0.1' } }).then(
      () => ({ code: 0, stderr: '' }),
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('dist/ is not built, and this install has no compiler');
    expect(started.stderr).toContain('npm ci && npm run build && npm prune --omit=dev');
  }, 240_000);

  it('built, then pruned: no development dependency left, and npm start serves /v1/health', async () => {
    await run('npm', ['ci', '--prefer-offline'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    await run('npm', ['run', 'build'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    await run('npm', ['prune', '--omit=dev'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 });
    for (const dev of ['typescript', 'vitest', 'esbuild', 'wrangler', 'playwright-core', 'node', 'yaml', '@cloudflare/speedtest']) {
      expect({ dev, present: existsSync(join(dir, 'node_modules', dev)) }).toEqual({ dev, present: false });
    }
    for (const dep of ['commander', 'pino', 'prom-client', 'maxmind']) expect({ dep, present: existsSync(join(dir, 'node_modules', dep)) }).toEqual({ dep, present: true });

    const child = spawn('npm', ['start'], { cwd: dir, env: { ...env, PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
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
      // The build was current: nothing was compiled, nor said to be stale.
      expect(err).not.toContain('no compiler');
    } finally {
      // npm runs the server under a shell: stop the whole group.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  }, 400_000);
});
