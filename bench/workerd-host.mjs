// Serves the Worker from workerd alone (no wrangler, no miniflare, no proxy in front), for the
// CPU figures of bench/workers.mjs: the bundle wrangler would deploy (`wrangler deploy --dry-run`),
// a workerd configuration written here with the Durable Objects in memory. With the argument
// `bare` it serves instead a bare Worker answering a constant body: the baseline, in a workerd
// process of its own so that each one's CPU can be read. request.cf is whatever a client sends as
// JSON in the \`cf-blob\` header (workerd's cfBlobHeader), as the edge would set it. Vars as JSON
// in NETDIAG_BENCH_VARS. Prints the port, then serves until SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'netdiag-workerd-'));
const built = spawnSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', dir], { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${built.stderr}`);

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
const bare = process.argv[2] === 'bare';
const port = await freePort();
const vars = JSON.parse(process.env.NETDIAG_BENCH_VARS ?? '{}');
const text = (value) => JSON.stringify(String(value));
writeFileSync(
  join(dir, 'bare.js'),
  `const BODY = ${JSON.stringify(JSON.stringify({ data: { status: 'ok', api_version: 'v1', upstream_provider_health: 'not_checked' }, meta: { api_version: 'v1', request_id: '00000000-0000-0000-0000-000000000000', requested_at: '2000-01-01T00:00:00.000Z' } }))};
export default { fetch: () => new Response(BODY, { headers: { 'Content-Type': 'application/json' } }) };
`,
);
writeFileSync(
  join(dir, 'config.capnp'),
  `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = ${bare ? '.bare' : '.netdiag'}),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (cfBlobHeader = "cf-blob"), service = "main")],
);
const netdiag :Workerd.Worker = (
  modules = [(name = "entry.js", esModule = embed "entry.js")],
  compatibilityDate = "2026-11-01",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [
${Object.entries(vars).map(([name, value]) => `    (name = ${text(name)}, text = ${text(value)}),`).join('\n')}
    (name = "RATE_LIMITER", durableObjectNamespace = "RateLimitCounter"),
    (name = "REGION_PROBE", durableObjectNamespace = "RegionProbe"),
  ],
  durableObjectNamespaces = [
    (className = "RateLimitCounter", uniqueKey = "netdiag-rate-limit", enableSql = true),
    (className = "RegionProbe", uniqueKey = "netdiag-region-probe", enableSql = true),
  ],
  durableObjectStorage = (inMemory = void),
  globalOutbound = "internet",
);
const bare :Workerd.Worker = (
  modules = [(name = "bare.js", esModule = embed "bare.js")],
  compatibilityDate = "2026-11-01",
);
`,
);
const workerd = spawn(join(root, 'node_modules/.bin/workerd'), ['serve', join(dir, 'config.capnp')], { stdio: ['ignore', 'inherit', 'inherit'] });
workerd.once('exit', (code) => process.exit(code ?? 1));
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: { 'cf-blob': '{}' } })).ok) break;
  } catch {
    if (i > 100) throw new Error('workerd did not start');
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(`${port}\n`);
process.on('SIGTERM', () => {
  workerd.kill('SIGTERM');
});
