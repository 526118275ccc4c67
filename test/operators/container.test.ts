// The container image (Containerfile), built and run with Debian's podman, as the README's
// "Container" section says: a base made here without any image registry (debootstrap plus this
// checkout's Node 22, scripts/container-base.sh), the image built on it with --build-arg BASE,
// then run with an environment file. It must serve /v1/health and /v1/ip for a forwarded caller
// from the geo data inside it, run as a user without privileges, pass its own HEALTHCHECK, and
// on `podman stop` finish the request in flight and exit 0.
//
// podman runs with runc and cgroupfs and no default rlimits (a containers.conf of this suite's
// own): crun refuses this kernel's hybrid cgroups and the default rlimits. The host's npm cache
// is lent to the build so its `npm ci` need not fetch what the checkout's own install fetched.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ready = requireCommands('container image', ['podman', 'runc', 'debootstrap'], 'podman runc debootstrap');
const exec = promisify(execFile);
const MiB = 1024 * 1024;

describe.skipIf(!ready)('container image: built on a local Debian base, run with an environment file', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'netdiag-container-'));
  const env = { ...process.env, CONTAINERS_CONF: join(scratch, 'containers.conf') };
  const podman = (...args: string[]) => exec('podman', args, { env, maxBuffer: 64 * MiB });
  const suffix = randomBytes(4).toString('hex');
  const image = `localhost/netdiag-test:${suffix}`;
  const container = `netdiag-test-${suffix}`;
  let base: string;
  let port: number;
  let silentDns: Socket;

  beforeAll(async () => {
    writeFileSync(env.CONTAINERS_CONF, '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n');
    // The base depends only on the script and the Node it copies in: kept between runs by that
    // key, so a developer's second run skips debootstrap.
    const node = join(ROOT, 'node_modules', 'node', 'bin', 'node');
    const key = createHash('sha256').update(readFileSync(join(ROOT, 'scripts', 'container-base.sh'))).update(readFileSync(node)).digest('hex').slice(0, 12);
    base = `localhost/netdiag-test-base:${key}`;
    const exists = await podman('image', 'exists', base).then(
      () => true,
      () => false,
    );
    if (!exists) await exec('sh', [join(ROOT, 'scripts', 'container-base.sh'), base, node], { env, maxBuffer: 64 * MiB });
    // --layers=false: no intermediate image of either stage is left behind (over a gigabyte each run).
    await podman('build', '--format', 'docker', '--layers=false', '--network', 'host', '--volume', `${join(homedir(), '.npm')}:/root/.npm`, '--build-arg', `BASE=${base}`, '--tag', image, ROOT);

    // A resolver that never answers (nothing here may reach the internet's).
    silentDns = createSocket('udp4');
    silentDns.bind(0, '127.0.0.1');
    await once(silentDns, 'listening');
    port = await freePort();
    const envFile = join(scratch, 'netdiag.env');
    writeFileSync(envFile, [`PORT=${String(port)}`, 'HOST=127.0.0.1', 'NETDIAG_TRUST_PROXY=loopback', `NETDIAG_DNS_UPSTREAM=udp://127.0.0.1:${String(silentDns.address().port)}`, 'NETDIAG_EVENTS_SINK=none', ''].join('\n'));
    await podman('run', '--detach', '--name', container, '--network', 'host', '--env-file', envFile, image);
    const up = await eventually(() => fetch(`http://127.0.0.1:${String(port)}/v1/health`).then((r) => r.ok, () => false), 30_000, 200);
    if (!up) throw new Error(`the container did not serve: ${(await podman('logs', container)).stderr}`);
  }, 900_000);

  afterAll(async () => {
    await podman('rm', '--force', '--ignore', container).catch(() => undefined);
    await podman('rmi', '--force', image).catch(() => undefined);
    silentDns.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it('serves /v1/health, and /v1/ip for a caller forwarded by the trusted proxy, from the geo data inside it', async () => {
    const health = await fetch(`http://127.0.0.1:${String(port)}/v1/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { data: { status: string } }).data.status).toBe('ok');
    const ip = await fetch(`http://127.0.0.1:${String(port)}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.8.8' } });
    expect(ip.status).toBe(200);
    const { data } = (await ip.json()) as { data: { address: string; network: { asn: number | null }; location: { country_code: string | null } } };
    expect(data.address).toBe('8.8.8.8');
    expect(data.network.asn).toBe(15169);
    expect(data.location.country_code).toBe('US');
  });

  it('runs the server as a user without privileges, with the Node flags `npm start` uses', async () => {
    // The server is the container's first process (ENTRYPOINT in exec form).
    const { stdout } = await podman('exec', container, 'cat', '/proc/1/status');
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(stdout);
    expect(uids?.slice(1)).toEqual(['10001', '10001']);
    // The memory settings (docs/operations.md, "Memory") as package.json's start line has them:
    // the words between `node` and the script.
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
    const flags = start.slice(start.indexOf('node') + 1, start.indexOf('dist/cli/main.js'));
    expect(flags.length).toBeGreaterThan(0);
    const { stdout: cmdline } = await podman('exec', container, 'cat', '/proc/1/cmdline');
    expect(cmdline.split('\0').slice(0, flags.length + 3)).toEqual(['node', ...flags, 'dist/cli/main.js', 'serve']);
  });

  it('passes its own HEALTHCHECK, and is small: no development dependency in it', async () => {
    await expect(podman('healthcheck', 'run', container)).resolves.toBeDefined();
    const sizes = await Promise.all([image, base].map(async (name) => Number((await podman('image', 'inspect', '--format', '{{.Size}}', name)).stdout.trim())));
    const [whole = 0, under = 0] = sizes;
    // What the image adds to its base: the production dependencies and dist/ with the geo tables
    // (about 80 MB since the compact geo tables; 187 MB before). A small box's budget is
    // 110 MB (issue 42); the development dependencies would add over a gigabyte.
    expect((whole - under) / 1e6).toBeLessThan(110);
    const { stdout } = await podman('run', '--rm', '--entrypoint', 'ls', image, 'node_modules');
    const installed = stdout.split('\n');
    expect(installed).toContain('pino');
    expect(['typescript', 'vitest', 'wrangler', 'playwright-core', '@ip-location-db'].filter((name) => installed.includes(name))).toEqual([]);
  });

  it('on podman stop, finishes the upload in flight, then exits 0', async () => {
    // An upload to the speed-test target, half its body sent: in flight when SIGTERM arrives.
    const half = Buffer.alloc(64 * 1024, 0x30);
    let answer: (status: number) => void = () => undefined;
    const answered = new Promise<number>((resolve) => (answer = resolve));
    const upload = request({ host: '127.0.0.1', port, method: 'POST', path: '/__up', headers: { 'Content-Length': String(2 * half.length), 'Content-Type': 'text/plain' } }, (res) => {
      res.resume();
      res.on('end', () => {
        answer(res.statusCode ?? 0);
      });
    });
    upload.write(half);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = podman('stop', '--time', '20', container);
    // The drain has begun once the listener is closed: a new connection is refused.
    const closed = await eventually(() => fetch(`http://127.0.0.1:${String(port)}/v1/health`).then(() => false, () => true), 10_000, 50);
    expect(closed).toBe(true);
    upload.end(half);
    expect(await answered).toBe(200);
    await stopped;
    const { stdout } = await podman('inspect', '--format', '{{.State.ExitCode}}', container);
    expect(stdout.trim()).toBe('0');
    // Nothing was logged as a fault on the way out.
    const { stdout: logs } = await podman('logs', container);
    const levels = logs.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { level: string }).level);
    expect(levels.filter((level) => level === 'error' || level === 'fatal')).toEqual([]);
  }, 60_000);
});
