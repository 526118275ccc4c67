// npm run bench:rpm [-- --runs 3] [--rate 20] [--queues 5,300] [--servers netdiag,minimal] [--clients goresponsiveness,netdiag,page] [--logs DIR]
//   (root, iproute2, openssl; Node 22; needs `npm run build`, which the npm script runs)
//   NETDIAG_GORESPONSIVENESS=/path/to/networkQuality adds the draft authors' client (built as
//   docs/benchmarks.md, "Responsiveness against the draft's client", tells); without it the bench
//   runs `netdiag rpm` alone and says so.
//
// Responsiveness on a 20 Mbit/s link (`--rate` for another) (test/support/shaped-link.ts: tbf on a router namespace, the
// servers sending with CUBIC, net.ipv4.tcp_notsent_lowat=16384 in their namespace) with a 5 ms and
// a 300 ms queue: `netdiag serve` and a minimal HTTP/2 server (bench/rpm-minimal-server.mjs), each
// measured by goresponsiveness and by `netdiag rpm`, runs interleaved (for each run, each queue,
// each server, each client). Prints every run's figures and components, then per queue and server
// the medians and the two ratios issue 72 holds: goresponsiveness against netdiag's server over it
// against the minimal one, and `netdiag rpm` over goresponsiveness. `--clients ...,page` adds the
// page's responsiveness estimate (its default speed test in Chromium, against netdiag's server
// only: the minimal one serves no page), to set beside `netdiag rpm`'s figure.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { goresponsivenessProbes } from './rpm-probe-log.mjs';
import { importTestSupport } from './test-support.mjs';
import { median as medianOf } from './lib.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    rate: { type: 'string', default: '20' },
    queues: { type: 'string', default: '5,300' },
    servers: { type: 'string', default: 'netdiag,minimal' },
    clients: { type: 'string', default: 'goresponsiveness,netdiag' },
    logs: { type: 'string' },
  },
});
const runs = Number(values.runs);
const queues = values.queues.split(',').map(Number);
const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'netdiag-rpm-bench-'));
const gores = process.env.NETDIAG_GORESPONSIVENESS;
const clients = values.clients.split(',').filter((c) => c !== 'goresponsiveness' || gores !== undefined);
if (gores === undefined) console.log('NETDIAG_GORESPONSIVENESS is not set: goresponsiveness is left out, netdiag rpm runs alone');
const servers = values.servers.split(',');
const logs = values.logs ?? join(scratch, 'logs');
mkdirSync(logs, { recursive: true });

const { createShapedLink, serveOnLink, runPageTest, ...rules } = await importTestSupport(
  "export { createShapedLink, serveOnLink } from './test/support/shaped-link.ts'; export { runPageTest } from './test/support/link-matrix.ts'; export { noProbes, responsiveness, trimmedMean } from './src/common/responsiveness/rpm.ts';",
  scratch,
);

/** Runs `command` to its end; its output and exit status. */
async function run(command, args, env, timeoutMs) {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** goresponsiveness against `base`: its final RPM, and each probe kind's times from its log. */
async function runGoresponsiveness(base, certFile, tag) {
  const prefix = join(logs, `${tag}.csv`);
  // -rpm.tmp is the share of the fastest probes its trimmed mean keeps (utilities.TrimBy), 5 by
  // default; the draft's TMP keeps 95%, which is what `netdiag rpm` computes.
  const out = await run(gores, ['-url', `${base}/.well-known/nq`, '-rpm.tmp', '95', '-logger-filename', prefix], { SSL_CERT_FILE: certFile }, 120_000);
  const final = /Final RPM:\s*(\d+) \(Single-Sided/.exec(out.stdout);
  const p90 = /Final RPM:\s*(\d+) \(P90\)/.exec(out.stdout);
  writeFileSync(join(logs, `${tag}.out`), out.stdout + out.stderr);
  if (final === null) return { error: `no final RPM (exit ${out.code}): ${(out.stdout + out.stderr).slice(-400)}` };
  // Each direction's block (between "========" lines) ends with its trimmed mean, NaN when none of its intervals was whole.
  const direction = (name) => {
    const block = out.stdout.split('========').find((b) => b.includes(`${name}:`)) ?? '';
    const m = /RPM:\s*(\S+) \(Single-Sided/.exec(block);
    const v = m === null ? NaN : Number(m[1]);
    return Number.isFinite(v) ? v : undefined;
  };
  const files = readdirSync(logs).filter((f) => f.startsWith(tag) && (f.includes('-foreign-') || f.includes('-self-'))).map((f) => join(logs, f));
  return { rpm: Number(final[1]), p90: p90 === null ? undefined : Number(p90[1]), down: direction('Download'), up: direction('Upload'), components: goresponsivenessProbes(files, rules) };
}

/** `netdiag rpm --json` against `base`: its figure and components. */
async function runNetdiag(base, certFile, tag) {
  const out = await run(process.execPath, [CLI, 'rpm', '--url', base, '--json'], { NODE_EXTRA_CA_CERTS: certFile }, 120_000);
  writeFileSync(join(logs, `${tag}.json`), out.stdout + out.stderr);
  if (out.code !== 0) return { error: `exit ${out.code}: ${out.stderr.trim().slice(-400)}` };
  const report = JSON.parse(out.stdout);
  return { rpm: report.rpm, p90: report.rpm_p90, down: report.download_rpm, up: report.upload_rpm, components: { all: report.components, download: report.download.components, upload: report.upload.components } };
}

/** The page's default speed test against `base` in Chromium: its responsiveness estimate. */
async function runPage(browser, base) {
  const run = await runPageTest(browser, base, scratch);
  if (!run.ok) return { error: run.error };
  const figures = run.result.exported.figures ?? {};
  return { rpm: figures.responsiveness_rpm_estimate ?? undefined, components: { loaded_latency_down_ms: figures.loaded_latency_down_ms, loaded_latency_up_ms: figures.loaded_latency_up_ms } };
}

/** The median of the figures there are (a client that gave none is left out), undefined without any. */
const median = (xs) => {
  const known = xs.filter((x) => typeof x === 'number');
  return known.length === 0 ? undefined : medianOf(known);
};
const fmt = (v, digits = 0) => (v === undefined || v === null ? '-' : Number(v).toFixed(digits));
/** A run's components on one line: each probe kind's figure, ms, and the counts. */
const componentsText = (c) => (c === undefined || c === null ? '' : ` ${JSON.stringify(c, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`);

function certificateFor(address) {
  const certFile = join(scratch, 'cert.pem');
  const keyFile = join(scratch, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${address}`, '-addext', `subjectAltName=IP:${address}`, '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  return { certFile, keyFile };
}

async function startMinimal(link, cert) {
  const [command, ...args] = link.inServer([process.execPath, join(root, 'bench/rpm-minimal-server.mjs'), '--host', link.serverAddress, '--port', '8443', '--cert', cert.certFile, '--key', cert.keyFile]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`the minimal server exited with ${code}`)));
  });
  return { base: `https://${link.serverAddress}:8443`, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit'); } };
}

const link = createShapedLink();
const results = [];
let netdiag;
let minimal;
let browser;
try {
  // The page is served with the bench's own certificate: Chromium is told not to check it.
  if (clients.includes('page')) browser = await (await import('playwright-core')).chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--ignore-certificate-errors'] });
  const [sysctl, ...sysctlArgs] = link.inServer(['sysctl', '-qw', 'net.ipv4.tcp_notsent_lowat=16384']);
  execFileSync(sysctl, sysctlArgs);
  const cert = certificateFor(link.serverAddress);
  const served = await serveOnLink(link, CLI, { NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
  netdiag = { base: `https://${link.serverAddress}:8080`, stop: served.stop };
  minimal = await startMinimal(link, cert);
  const bases = { netdiag: netdiag.base, minimal: minimal.base };
  for (let r = 1; r <= runs; r++) {
    for (const queueMs of queues) {
      link.shape(Number(values.rate), queueMs);
      for (const server of servers) {
        for (const client of clients) {
          if (client === 'page' && server !== 'netdiag') continue;
          const tag = `q${queueMs}-${server}-${client}-run${r}`;
          const result =
            client === 'goresponsiveness' ? await runGoresponsiveness(bases[server], cert.certFile, tag) : client === 'page' ? await runPage(browser, bases[server]) : await runNetdiag(bases[server], cert.certFile, tag);
          results.push({ run: r, queueMs, server, client, ...result });
          console.log(`${tag}: ${result.error === undefined ? `${fmt(result.rpm)} RPM (p90 ${fmt(result.p90)}; download ${fmt(result.down)}, upload ${fmt(result.up)})${componentsText(result.components)}` : `failed: ${result.error}`}`);
        }
      }
    }
  }
} finally {
  await browser?.close();
  await netdiag?.stop();
  await minimal?.stop();
  link.destroy();
}

const table = [];
for (const queueMs of queues) {
  const med = (server, client) => median(results.filter((x) => x.queueMs === queueMs && x.server === server && x.client === client).map((x) => x.rpm));
  for (const server of servers) {
    const row = { queue: `${queueMs} ms`, server };
    for (const client of clients) row[client] = results.filter((x) => x.queueMs === queueMs && x.server === server && x.client === client).map((x) => fmt(x.rpm)).join(', ') + ` (median ${fmt(med(server, client))})`;
    if (clients.includes('goresponsiveness') && clients.includes('netdiag')) row['netdiag / goresponsiveness'] = fmt(med(server, 'netdiag') / med(server, 'goresponsiveness'), 2);
    table.push(row);
  }
  const of = (server, client) => results.filter((x) => x.queueMs === queueMs && x.server === server && x.client === client);
  // Each direction apart: the final figure pools both directions' probes, weighted by how many each client took in each.
  for (const server of servers) {
    const line = clients.filter((c) => c !== 'page').map((c) => `${c} download ${fmt(median(of(server, c).map((x) => x.down)))}, upload ${fmt(median(of(server, c).map((x) => x.up)))}`);
    console.log(`${queueMs} ms queue, ${server}'s server, medians by direction: ${line.join('; ')}`);
  }
  if (clients.includes('goresponsiveness') && servers.includes('netdiag') && servers.includes('minimal')) {
    console.log(`${queueMs} ms queue: goresponsiveness against netdiag's server over the minimal one: ${fmt(med('netdiag', 'goresponsiveness') / med('minimal', 'goresponsiveness'), 2)}`);
    // goresponsiveness's default statistic (-rpm.tmp 5, the fastest 5%), which it prints unless told otherwise, from its probe logs.
    const fastest = (server) => median(of(server, 'goresponsiveness').map((x) => x.components?.rpm_fastest_5_percent));
    console.log(`${queueMs} ms queue: the same by goresponsiveness's default statistic (the fastest 5%): ${fmt(fastest('netdiag'))} against ${fmt(fastest('minimal'))}, ${fmt(fastest('netdiag') / fastest('minimal'), 2)}`);
  }
}
console.table(table);
writeFileSync(join(logs, 'results.json'), JSON.stringify(results, null, 2));
console.log(`probe logs: ${logs}`);
if (values.logs === undefined) rmSync(scratch, { recursive: true, force: true });
