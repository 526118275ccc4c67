// Whole-program: what only the built `netdiag` command shows about its configuration. A bad
// value stops start-up with exit code 2 and one line on stderr naming the variable, whichever
// step finds it (a variable on its own, a check spanning variables, a file it names); a good
// configuration starts and states itself in one line. Every variable's refusals, bounds and
// defaults are unit tests of the tables (src/runtime/node/adapter/config.test.ts, src/core/config/*.test.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, serveCli } from '../support/process.js';
import { freePort } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-config-'));
const notPem = join(dir, 'not.pem');
writeFileSync(notPem, 'this is not a certificate\n');

/** One refusal from each step of loading, and the one line each must print. */
const BAD: [string, Record<string, string>, string][] = [
  ['a variable on its own', { NETDIAG_COLO: 'ams' }, 'netdiag: invalid NETDIAG_COLO: must be three capital letters, got "ams"'],
  ['a check spanning variables', { NETDIAG_REDIS_URL: 'redis://127.0.0.1:6379' }, 'netdiag: invalid NETDIAG_RATE_LIMIT_KEY: is required with NETDIAG_REDIS_URL: make one with `openssl rand -base64 32` and set the same value on every instance'],
  ['a family origin that would add a directive to the page\'s policy', { NETDIAG_IPV4_URL: 'http://x;sandbox' }, 'netdiag: invalid NETDIAG_IPV4_URL: "http://x;sandbox" must name its host with letters, digits and hyphens in dot-separated labels (no empty label or trailing dot), or an IP address; got the host "x;sandbox"'],
  ['a listed deployment whose URL has a path', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net/speed","location":"Frankfurt"}]' }, 'netdiag: invalid NETDIAG_SERVERS: entry 1 ("fra"): "https://fra.example.net/speed" must be an origin only (scheme, host and port), such as https://fra.example.net'],
  ['a file it names', { NETDIAG_TLS_CERT: notPem, NETDIAG_TLS_KEY: notPem }, 'netdiag: invalid NETDIAG_TLS_KEY: the key and certificate are not a valid PEM pair'],
];

describe('start-up configuration', () => {
  it.each(BAD)('netdiag serve: a bad value found by %s stops start-up with one line naming it', async (_step, env, line) => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ...env });
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')).toEqual([line, '']);
    expect(run.stdout).not.toContain('listening');
  });

  it('netdiag serve with worker threads: a file found bad in a thread stops start-up the same way', async () => {
    const notMmdb = join(dir, 'not.mmdb');
    writeFileSync(notMmdb, 'this is not a MaxMind database\n');
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_WORKERS: '2', NETDIAG_GEOIP_CITY: notMmdb });
    expect(run.code).toBe(2);
    const lines = run.stderr.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^netdiag: invalid NETDIAG_GEOIP_CITY: "${notMmdb}" is not a valid MaxMind database`));
    expect(run.stdout).not.toContain('"role":"primary"');
  });

  it('netdiag probe: a bad value stops start-up with one line naming it', async () => {
    const run = await runCli(['probe'], { PORT: '70000', HOST: '127.0.0.1' });
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')).toEqual(['netdiag: invalid PORT: must be a whole number from 0 to 65535, got "70000"', '']);
    expect(run.stdout).not.toContain('listening');
  });

  it('states the effective configuration in one line at start-up, without a credential or token', async () => {
    const [metricsPort, closed] = [await freePort(), await freePort()];
    const serving = await serveCli({
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_EVENTS_SINK: 'https://collector-user:collector-pass@collector.example/ingest?token=sink-token',
      NETDIAG_DNS_UPSTREAM: 'https://dns.example/dns-query?key=doh-token',
      NETDIAG_REDIS_URL: `redis://:redis-pass@127.0.0.1:${String(closed)}/0`,
      NETDIAG_RATE_LIMIT_KEY: 'rate-limit-secret-0123456789abcdefghijklmnop',
      NETDIAG_PROBES: 'weur=http://127.0.0.1:9/rtt-base',
      NETDIAG_METRICS_PORT: String(metricsPort),
      NETDIAG_TURN_URL: 'turn:127.0.0.1:3478',
      NETDIAG_TURN_SECRET: 'turn-secret-0123456789abcdefghijklmnopq',
    });
    try {
      const lines = serving.stdout().split('\n').filter((l) => l.includes('"msg":"configuration"'));
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
      expect(line).toMatchObject({
        // PORT=0: the line states the port asked for; the `listening` line says which it got.
        listeners: { api: 'http://127.0.0.1:0', tls: false, proxy_protocol: false, metrics: `http://127.0.0.1:${String(metricsPort)}/metrics` },
        trust_proxy: 'loopback',
        dns_upstream: 'https://dns.example/dns-query',
        events_sink: 'https://collector.example/ingest',
        limiter: `redis redis://127.0.0.1:${String(closed)}/0`,
        workers: 1,
        probes: { weur: 'http://127.0.0.1:9/rtt-base' },
        geo: { city: 'embedded DB-IP Lite city', asn: 'embedded ASN table' },
        turn: 'turn:127.0.0.1:3478',
      });
      for (const secret of ['collector-pass', 'collector-user', 'sink-token', 'doh-token', 'redis-pass', 'rate-limit-secret', 'turn-secret']) expect(serving.stdout()).not.toContain(secret);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  }, 20_000);

  it('--help describes the commands', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['serve', 'probe', 'ip', 'dns', 'latency', 'speedtest', 'config']) expect(run.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('an unknown command exits 2 naming it', async () => {
    const run = await runCli(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("error: unknown command 'frobnicate'");
    expect(run.stderr).toContain('--help');
  });
});
