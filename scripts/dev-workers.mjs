// `npm run dev:workers`: the Workers build served locally by wrangler (workerd, miniflare) on
// 127.0.0.1:PORT (default 8787), offline: no metrics sent, no account, local Durable Objects and
// bindings. A rate-limit key is made for the session unless .dev.vars or the environment sets one
// (on Workers it is a secret, never in wrangler.jsonc). Extra arguments go to `wrangler dev`,
// e.g. `-- --var NETDIAG_DNS_UPSTREAM:http://127.0.0.1:8053/dns-query`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const port = process.env.PORT ?? '8787';
if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) {
  console.error(`PORT must be a port number, got "${port}"`);
  process.exit(2);
}
const devVars = join(root, '.dev.vars');
const keyed = process.env.NETDIAG_RATE_LIMIT_KEY !== undefined || (existsSync(devVars) && /^NETDIAG_RATE_LIMIT_KEY=/m.test(readFileSync(devVars, 'utf8')));
const args = ['dev', '--ip', '127.0.0.1', '--port', port, '--local', ...(keyed ? [] : ['--var', `NETDIAG_RATE_LIMIT_KEY:${randomBytes(32).toString('base64url')}`])];
if (process.env.NETDIAG_RATE_LIMIT_KEY !== undefined) args.push('--var', `NETDIAG_RATE_LIMIT_KEY:${process.env.NETDIAG_RATE_LIMIT_KEY}`);
const child = spawn(join(root, 'node_modules', '.bin', 'wrangler'), [...args, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  // Offline: no metrics sent, and miniflare's placeholder request.cf used as it is rather than
  // fetched from workers.cloudflare.com first (which printed two ENOTFOUND stack traces).
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_API_TOKEN: '', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
