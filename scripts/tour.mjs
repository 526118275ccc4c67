#!/usr/bin/env node
// `npm run tour`: the README's tour deployment on this machine. Knot DNS (Debian's `knot`) with
// the tour's zones as the DNS upstream, one `netdiag probe` as region weur, and `netdiag serve`
// on port 8080 (or `--port N`) trusting loopback as a proxy, so the README's `X-Forwarded-For`
// examples are believed; and a second `netdiag serve` for a browser on port 8081 (or
// `--page-port N`), the same upstreams but no proxy trusted, since a browser sends no
// `X-Forwarded-For` and a trusted proxy that names no client is answered with a 503. Without Knot
// the servers keep their default upstream and say so: the DNS example and the reverse name then
// differ from the README (503, or null). Ctrl-C stops them all.
// test/readme.test.ts runs this script and every README example against it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The tour's names (example.test's MX, 8.8.8.8's reverse name) are the suites' DNS fixtures.
const ZONES = join(root, 'test', 'fixtures', 'dns');
const CLI = join(root, 'dist', 'cli', 'main.js');
/** The number after `flag`, or `fallback` without the flag. */
function portArgument(flag, fallback) {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const port = portArgument('--port', 8080);
const pagePort = portArgument('--page-port', 8081);
const children = [];
const scratch = mkdtempSync(join(tmpdir(), 'netdiag-tour-'));

const say = (line) => process.stderr.write(`tour: ${line}\n`);

function stop(code) {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

/** A port no one listens on now, for Knot and the probe. */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port: free } = server.address();
      server.close(() => resolve(free));
    });
  });
}

/** Starts `argv` and resolves with its port once it logs `listening` (netdiag's JSON log line). */
function startNetdiag(args, env, name) {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${String(code)} before listening`)));
  });
}

/** Knot on a free port with the tour's zones, or undefined when knotd is not installed. */
async function startKnot() {
  const knotd = ['/usr/sbin/knotd', 'knotd'].find((path) => spawnSync(path, ['--version']).status === 0);
  if (knotd === undefined) return undefined;
  const knotPort = await freePort();
  const zones = readdirSync(ZONES).filter((f) => f.endsWith('.zone'));
  const user = process.getuid?.() === 0 ? 'root:root' : `${String(process.getuid?.())}:${String(process.getgid?.())}`;
  writeFileSync(
    join(scratch, 'knot.conf'),
    `server:\n    rundir: "${scratch}"\n    listen: [ 127.0.0.1@${String(knotPort)} ]\n    user: ${user}\n` +
      `database:\n    storage: "${scratch}"\nlog:\n  - target: stderr\n    any: error\n` +
      `template:\n  - id: default\n    storage: "${ZONES}"\n    semantic-checks: off\n` +
      `zone:\n${zones.map((z) => `  - domain: ${z.replace(/\.zone$/, '')}\n    file: ${z}`).join('\n')}\n`,
  );
  const child = spawn(knotd, ['-c', join(scratch, 'knot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  // Knot loads the zones before it answers; a moment is enough for these few.
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (child.exitCode !== null) throw new Error(`knotd exited with ${String(child.exitCode)}`);
  return knotPort;
}

try {
  const knotPort = await startKnot();
  if (knotPort === undefined) say('Knot is not installed (Debian: apt-get install knot): the server keeps its default DNS upstream, so the DNS example and reverse names will differ from the README');
  const probePort = await startNetdiag(['probe'], { PORT: '0', HOST: '127.0.0.1' }, 'the probe');
  const served = await startNetdiag(['serve'], {
    PORT: String(port),
    NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probePort)}`,
    NETDIAG_TRUST_PROXY: 'loopback',
    ...(knotPort === undefined ? {} : { NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knotPort)}` }),
  }, 'the server');
  const page = await startNetdiag(['serve'], {
    PORT: String(pagePort),
    NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probePort)}`,
    ...(knotPort === undefined ? {} : { NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knotPort)}` }),
  }, 'the page server');
  say(`ready on http://localhost:${String(served)} for the README's examples: Knot ${knotPort === undefined ? 'not running' : `on 127.0.0.1:${String(knotPort)}`}, probe weur on 127.0.0.1:${String(probePort)}, loopback trusted as a proxy.`);
  say(`open http://localhost:${String(page)}/ in a browser (the same deployment, no proxy trusted). Ctrl-C stops the tour.`);
  for (const child of children) child.on('exit', () => stop(1));
} catch (err) {
  say(err instanceof Error ? err.message : String(err));
  stop(1);
}
