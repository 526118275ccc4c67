#!/usr/bin/env node
// `npm run tour`: the README's tour deployment on this machine. Knot DNS (Debian's `knot`) with
// the tour's zones as the DNS upstream, one `netdiag probe` as region weur, and `netdiag serve`
// on port 8080 (or `--port N`) trusting loopback as a proxy, so the README's `X-Forwarded-For`
// examples are believed; and a second `netdiag serve` for a browser on port 8081 (or
// `--page-port N`), the same upstreams but no proxy trusted, since a browser sends no
// `X-Forwarded-For` and a trusted proxy that names no client is answered with a 503. Without Knot
// the servers keep their default upstream and say so: the DNS example and the reverse name then
// differ from the README (503, or null). Ctrl-C, or SIGTERM to npm or to this script, stops them
// all and removes the scratch folder.
// test/readme.test.ts runs this script and every README example against it.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The tour's names (example.test's MX, 8.8.8.8's reverse name) are the suites' DNS fixtures.
const ZONES = join(root, 'test', 'fixtures', 'dns');
const CLI = join(root, 'dist', 'cli', 'main.js');
const OPTIONS = { '--port': { env: 'npm_config_port', fallback: 8080 }, '--page-port': { env: 'npm_config_page_port', fallback: 8081 } };
/** How long the servers may drain (theirs is 5 s, docs/api.md "Shutdown") before they are killed. */
const STOP_GRACE_MS = 8000;

const say = (line) => process.stderr.write(`tour: ${line}\n`);

class UsageError extends Error {}

/** `text` as a TCP port, or a UsageError naming the option and the value. */
function portNumber(flag, text) {
  if (text === undefined || text === 'true' || text === '') throw new UsageError(`${flag} needs a port number after it (${flag} 21080)`);
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) throw new UsageError(`${flag} must be a port number from 1 to 65535, not "${text}"`);
  return Number(text);
}

/**
 * The two ports, from `--port N --page-port M` as written (`npm run tour -- --port N`, or the
 * script run with node), or from what npm made of them. npm (10 and 11) takes an option it does
 * not know, written before `--`, as its own configuration: `--port=N` reaches the script as
 * npm_config_port=N, and `--port N` as npm_config_port=true with N passed on as a bare argument.
 * npm does not say in which order two such options came, so bare values are read in the order
 * the README writes them, --port then --page-port, and the script says so.
 */
function ports(argv, env) {
  const given = {};
  const bare = [];
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag in OPTIONS) given[flag] = portNumber(flag, inline ?? argv[++i]);
    else if (flag.startsWith('-')) throw new UsageError(`unknown option ${argv[i]} (the tour takes --port N and --page-port M)`);
    else bare.push(argv[i]);
  }
  const fromNpm = [];
  for (const [flag, { env: name }] of Object.entries(OPTIONS)) {
    if (given[flag] !== undefined || env[name] === undefined) continue;
    if (env[name] !== 'true') given[flag] = portNumber(flag, env[name]);
    else {
      given[flag] = portNumber(flag, bare.shift());
      fromNpm.push(`${flag} ${String(given[flag])}`);
    }
  }
  if (bare.length > 0) throw new UsageError(`unexpected argument "${bare[0]}" (the tour takes --port N and --page-port M)`);
  if (fromNpm.length === 2) say(`npm passed --port and --page-port on as bare values: read as ${fromNpm.join(' ')}, in that order (after \`npm run tour --\` options reach the tour as written)`);
  const port = given['--port'] ?? OPTIONS['--port'].fallback;
  const pagePort = given['--page-port'] ?? OPTIONS['--page-port'].fallback;
  if (port === pagePort) throw new UsageError(`--port and --page-port must differ (both ${String(port)}): the tour runs two servers`);
  return { port, pagePort };
}

let port;
let pagePort;
try {
  ({ port, pagePort } = ports(process.argv.slice(2), process.env));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  say(err.message);
  process.exit(2);
}

const children = [];
const scratch = mkdtempSync(join(tmpdir(), 'netdiag-tour-'));
let stopping = false;

/** Stops every child (killed after STOP_GRACE_MS), then removes the scratch folder, which Knot writes to until it exits. */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of running) child.kill('SIGTERM');
  const killer = setTimeout(() => {
    for (const child of running) child.kill('SIGKILL');
  }, STOP_GRACE_MS);
  await Promise.all(running.map((child) => (child.exitCode === null && child.signalCode === null ? once(child, 'exit') : undefined)));
  clearTimeout(killer);
  rmSync(scratch, { recursive: true, force: true });
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stop(0));

// Under `npm run tour`, npm runs `sh -c "node scripts/tour.mjs ..."` and forwards a SIGTERM to sh
// only; dash dies of it without passing it on. This script then has a new parent: that is its stop.
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid === parent) return;
    say('the shell npm ran this script in has ended: stopping');
    void stop(0);
  }, 250).unref();
}

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

/** Starts a child the stop will end; none once the tour is stopping, so none outlives it. */
function spawnChild(command, args, options) {
  if (stopping) throw new Error('stopped while starting');
  const child = spawn(command, args, options);
  children.push(child);
  return child;
}

/** Starts `argv` and resolves with its port once it logs `listening` (netdiag's JSON log line). */
function startNetdiag(args, env, name) {
  const child = spawnChild(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.on('exit', (code, signal) => reject(new Error(`${name} exited with ${String(code ?? signal)} before listening`)));
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
  const child = spawnChild(knotd, ['-c', join(scratch, 'knot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
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
  say(`open http://localhost:${String(page)}/ in a browser (the same deployment, no proxy trusted). Ctrl-C (or SIGTERM) stops the tour.`);
  for (const child of children) child.on('exit', () => void stop(1));
} catch (err) {
  say(err instanceof Error ? err.message : String(err));
  await stop(1);
}
