// Whole-program: every bad configuration value stops start-up with one line naming it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, serveCli } from './support/process.js';
import { freePort } from './support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-config-'));
const notPem = join(dir, 'not.pem');
writeFileSync(notPem, 'this is not a certificate\n');

const BAD: [string, Record<string, string>][] = [
  ['PORT', { PORT: 'eighty' }],
  ['PORT', { PORT: '70000' }],
  ['HOST', { HOST: 'bad host!' }],
  ['NETDIAG_PUBLIC_URL', { NETDIAG_PUBLIC_URL: 'ftp://api.example.net' }],
  ['NETDIAG_PUBLIC_URL', { NETDIAG_PUBLIC_URL: 'https://api.example.net/?x=1' }],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'udp://dns.example.net' }],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'dns://1.1.1.1' }],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'udp://1.1.1.1:99999' }],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'https://user:pw@dns.example/dns-query' }],
  ['NETDIAG_DNS_TIMEOUT_MS', { NETDIAG_DNS_TIMEOUT_MS: '0' }],
  ['NETDIAG_DNS_TIMEOUT_MS', { NETDIAG_DNS_TIMEOUT_MS: 'fast' }],
  ['NETDIAG_DNS_CACHE_SIZE', { NETDIAG_DNS_CACHE_SIZE: 'lots' }],
  ['NETDIAG_TRUST_PROXY', { NETDIAG_TRUST_PROXY: '10.0.0.0/33' }],
  ['NETDIAG_TRUST_PROXY', { NETDIAG_TRUST_PROXY: 'proxy.example.net' }],
  ['NETDIAG_PROXY_PROTOCOL', { NETDIAG_PROXY_PROTOCOL: 'maybe' }],
  ['NETDIAG_PROXY_PROTOCOL', { NETDIAG_PROXY_PROTOCOL: 'on' }],
  ['NETDIAG_COLO', { NETDIAG_COLO: 'ams' }],
  ['NETDIAG_COLO', { NETDIAG_COLO: 'AMST' }],
  ['NETDIAG_GEOIP_CITY', { NETDIAG_GEOIP_CITY: join(dir, 'missing-city.mmdb') }],
  ['NETDIAG_GEOIP_ASN', { NETDIAG_GEOIP_ASN: join(dir, 'missing-asn.mmdb') }],
  ['NETDIAG_RATE_LIMITS', { NETDIAG_RATE_LIMITS: 'dns=0' }],
  ['NETDIAG_RATE_LIMITS', { NETDIAG_RATE_LIMITS: 'smtp=5' }],
  ['NETDIAG_REDIS_URL', { NETDIAG_REDIS_URL: 'http://127.0.0.1:6379' }],
  ['NETDIAG_REDIS_URL', { NETDIAG_REDIS_URL: 'not a url' }],
  ['NETDIAG_WORKERS', { NETDIAG_WORKERS: '0' }],
  ['NETDIAG_WORKERS', { NETDIAG_WORKERS: 'many' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'mars=http://127.0.0.1:8081' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=ftp://127.0.0.1' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://a.example,weur=http://b.example' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://user:secret@a.example' }],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://a.example/?x=1' }],
  ['NETDIAG_EVENTS_SINK', { NETDIAG_EVENTS_SINK: 'kafka' }],
  ['NETDIAG_TLS_CERT', { NETDIAG_TLS_KEY: notPem }],
  ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: notPem }],
  ['NETDIAG_TLS_CERT', { NETDIAG_TLS_CERT: join(dir, 'missing.pem'), NETDIAG_TLS_KEY: notPem }],
  ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: notPem, NETDIAG_TLS_KEY: notPem }],
  ['NETDIAG_LOG_LEVEL', { NETDIAG_LOG_LEVEL: 'loud' }],
  ['NETDIAG_ACCESS_LOG', { NETDIAG_ACCESS_LOG: 'yes' }],
  ['NETDIAG_TRUST_PROXY_HEADER', { NETDIAG_TRUST_PROXY_HEADER: 'x-client-ip' }],
  ['NETDIAG_TRUST_PROXY_HEADER', { NETDIAG_TRUST_PROXY_HEADER: 'x-forwarded-for, forwarded' }],
  ['NETDIAG_HEADERS_TIMEOUT_MS', { NETDIAG_HEADERS_TIMEOUT_MS: '50' }],
  ['NETDIAG_REQUEST_TIMEOUT_MS', { NETDIAG_REQUEST_TIMEOUT_MS: '5000' }],
  ['NETDIAG_KEEPALIVE_TIMEOUT_MS', { NETDIAG_KEEPALIVE_TIMEOUT_MS: 'long' }],
  ['NETDIAG_DNS_CACHE_BYTES', { NETDIAG_DNS_CACHE_BYTES: '-1' }],
  ['NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES', { NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '0' }],
  ['NETDIAG_DNS_MAX_OUTSTANDING', { NETDIAG_DNS_MAX_OUTSTANDING: '1000000' }],
  ['NETDIAG_RATE_LIMIT_KEY', { NETDIAG_RATE_LIMIT_KEY: 'short' }],
  ['NETDIAG_EVENTS_SINK', { NETDIAG_EVENTS_SINK: 'https://us%3Aer:pw@collector.example/ingest' }],
];

/** Variables with bounds, a value outside them, and the bounds the error must name. */
const BOUNDED: [string, string, string][] = [
  ['NETDIAG_RATE_LIMITS', 'ip=1000000000', 'from 1 to 100000000'],
  ['NETDIAG_RATE_LIMITS', 'dns=0', 'from 1 to 100000000'],
  ['PORT', '99999999999999999999', 'from 0 to 65535'],
  ['NETDIAG_WORKERS', '257', 'from 1 to 256'],
  ['NETDIAG_DNS_TIMEOUT_MS', '60001', 'from 1 to 60000'],
  ['NETDIAG_DNS_CACHE_SIZE', '10000001', 'from 0 to 10000000'],
  ['NETDIAG_DNS_MAX_OUTSTANDING', '0', 'from 1 to 100000'],
  ['NETDIAG_EVENTS_QUEUE', '0', 'from 1 to 1000000'],
  ['NETDIAG_HEADERS_TIMEOUT_MS', '99', 'from 100 to 600000'],
];

describe('start-up configuration', () => {
  it.each(BAD)('%s: a bad value stops start-up with one line naming it (%o)', async (variable, env) => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ...env });
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^netdiag: invalid ${variable}: `));
    expect(run.stdout).not.toContain('listening');
  });

  it.each(BOUNDED)('%s=%s is refused naming its bounds (%s)', async (variable, value, bounds) => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', [variable]: value });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^netdiag: invalid ${variable}: .*${bounds}`));
  });

  it('NETDIAG_REDIS_URL without NETDIAG_RATE_LIMIT_KEY is refused, saying how to make a key', async () => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^netdiag: invalid NETDIAG_RATE_LIMIT_KEY: is required with NETDIAG_REDIS_URL: make one with `openssl rand -base64 32`/);
  });

  it.each([
    ['PORT', { PORT: '70000' }],
    ['HOST', { HOST: 'not a host!' }],
    ['NETDIAG_LOG_LEVEL', { NETDIAG_LOG_LEVEL: 'loud' }],
    ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: notPem }],
  ])('netdiag probe: a bad %s stops start-up with one line naming it', async (variable, env) => {
    const run = await runCli(['probe'], { PORT: '0', HOST: '127.0.0.1', ...env });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^netdiag: invalid ${variable}: `))]);
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
      });
      for (const secret of ['collector-pass', 'collector-user', 'sink-token', 'doh-token', 'redis-pass', 'rate-limit-secret']) expect(serving.stdout()).not.toContain(secret);
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
