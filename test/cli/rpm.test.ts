// `netdiag rpm` as a process: against the real server over TLS with HTTP/2 on loopback, set up by
// docs/command-line.md's recipe as written (what holds on any machine: the report's shape and what
// it rests on, never its figures), and against a FAKE server (support/fake-rpm-server.ts) for a
// configuration that is not one and a server that stalls.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readRpmReport } from '../../src/common/speedtest/report-parse.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startFakeRpmServer } from '../support/fake-rpm-server.js';
import { CLI, runCli, runProcess, serveCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const withOpenssl = requireCommands('netdiag rpm', ['openssl'], 'openssl');
const RPM_SCHEMA = JSON.parse(readFileSync(new URL('../../openapi/rpm-report.v2.schema.json', import.meta.url), 'utf8')) as object;
const COMMAND_LINE_DOC = readFileSync(new URL('../../docs/command-line.md', import.meta.url), 'utf8');

/** docs/command-line.md's recipe for a local certificate: its openssl line, its server line and its client line. */
function recipe(): { openssl: string; serve: string; rpm: string } {
  const block = /```sh\n(openssl req -x509[^]*?)```/.exec(COMMAND_LINE_DOC)?.[1] ?? '';
  const [openssl = '', serve = '', rpm = ''] = block.replace(/\\\n\s*/g, '').trim().split('\n');
  return { openssl, serve, rpm };
}

/** A shell line's leading `NAME=value` words and the words after them. */
function assignmentsAndWords(line: string): { env: Record<string, string>; words: string[] } {
  const words = line.replace(/\s*&$/, '').split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name = '', value = ''] = (words.shift() ?? '').split(/=(.*)/s);
    env[name] = value;
  }
  return { env, words };
}

/**
 * The Node the client runs on: a Node 20 on PATH when there is one (the client package's floor,
 * and the one that warns when an AbortSignal holds more than ten abort listeners), else this one.
 */
function clientNode(): string {
  const node20 = (process.env.PATH ?? '')
    .split(':')
    .map((dir) => join(dir, 'node'))
    .find((path) => existsSync(path) && spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.startsWith('20.'));
  return node20 ?? process.execPath;
}

describe.skipIf(!withOpenssl)('netdiag rpm', () => {
  const cert = withOpenssl ? selfSignedCertificate() : { certFile: '', keyFile: '' };
  // The CLI trusts the suite's certificate as an operator's own CA would be trusted.
  const trust = { NODE_EXTRA_CA_CERTS: cert.certFile };
  it("docs/command-line.md's recipe as written (a certificate made with its openssl line, netdiag serve with it, netdiag rpm trusting it) measures both directions within a default deployment's limits, with no MaxListenersExceededWarning", async () => {
    const lines = recipe();
    const dir = mkdtempSync(join(tmpdir(), 'netdiag-rpm-recipe-'));
    try {
      execFileSync('sh', ['-c', lines.openssl], { cwd: dir, stdio: 'ignore' });
      const served = assignmentsAndWords(lines.serve);
      expect(served.words).toEqual(['netdiag', 'serve']);
      // The recipe's files, in the folder it ran in; the port one free now, not 8443.
      const inDir = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.endsWith('.pem') ? join(dir, v) : v]));
      const serveEnv = inDir(served.env);
      delete serveEnv.PORT;
      const server = await serveCli(serveEnv);
      try {
        const client = assignmentsAndWords(lines.rpm);
        expect(client.words.slice(0, 3)).toEqual(['netdiag', 'rpm', '--url']);
        const args = client.words.slice(1).map((w) => w.replace(/:8443$/, `:${String(server.port)}`));
        const run = await runProcess(clientNode(), [CLI, ...args, '--json'], { PATH: process.env.PATH ?? '', ...inDir(client.env) }, 90_000);
        expect(run.code, run.stderr).toBe(0);
        // Node 20 warns when an AbortSignal holds more than ten abort listeners: the run's one signal must not gather one a second.
        expect(run.stderr).not.toContain('MaxListenersExceededWarning');
        const printed = JSON.parse(run.stdout) as unknown;
        // The published schema (openapi/rpm-report.v2.schema.json) holds what the built CLI prints.
        const valid = new Ajv2020({ strict: true }).compile(RPM_SCHEMA);
        expect(valid(printed), JSON.stringify(valid.errors)).toBe(true);
        const read = readRpmReport(printed);
        if (!read.ok) throw new Error(read.reason);
        const r = read.report;
        for (const d of [r.download, r.upload]) {
          expect(d.rpm).toBeGreaterThan(0);
          expect(d.mbps).toBeGreaterThan(0);
          expect(d.connections).toBeGreaterThanOrEqual(1);
          expect(d.connections).toBeLessThanOrEqual(16);
          // Each direction ends by the rules (stable) or at its 20 s bound.
          expect(d.duration_ms).toBeLessThanOrEqual(21_000);
          expect(d.stable || d.duration_ms >= 19_000).toBe(true);
          expect(d.probes.foreign).toBeGreaterThan(0);
          expect(d.probes.self).toBeGreaterThan(0);
          expect(['low', 'medium', 'high']).toContain(d.confidence);
        }
        expect(r.download_rpm).toBe(r.download.rpm);
        expect(r.upload_rpm).toBe(r.upload.rpm);
        expect(r.rpm).toBeGreaterThan(0);
        // Each figure is the draft's formula over the components it reports (60 000 over the mean of a
        // new connection's round trip and a loaded connection's exchange), the test's over both directions' probes.
        for (const [figure, c] of [[r.rpm, r.components], [r.download.rpm, r.download.components], [r.upload.rpm, r.upload.components]] as const) {
          expect(c.foreign_ms).toBeGreaterThan(0);
          expect(c.self_ms).toBeGreaterThan(0);
          expect(c.tcp_ms).not.toBeNull();
          expect(c.tls_ms).not.toBeNull();
          expect(c.http_ms).not.toBeNull();
          const fromComponents = 60_000 / (((c.foreign_ms ?? 0) + (c.self_ms ?? 0)) / 2);
          expect(Math.abs((figure ?? 0) - fromComponents) / fromComponents).toBeLessThan(0.01);
        }
        expect(r.rpm_p90).toBeLessThanOrEqual(r.rpm ?? 0);
        expect(['poor', 'fair', 'good', 'excellent']).toContain(r.rating);
        expect(r.stable).toBe(r.download.stable && r.upload.stable);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a plain http:// deployment: exit 1 saying it needs HTTPS and how to serve it, not naming a field', async () => {
    const plain: TestServer = await startTestServer();
    try {
      const run = await runCli(['rpm', '--url', plain.url], {}, 30_000);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`netdiag: ${plain.url} serves plain HTTP, and netdiag rpm needs HTTPS (the test runs over HTTP/2 with TLS).`);
      expect(run.stderr).toContain('NETDIAG_TLS_CERT and NETDIAG_TLS_KEY');
      expect(run.stderr).toContain(`--url https://127.0.0.1:${String(plain.port)}`);
      expect(run.stderr).toContain('docs/command-line.md, "How `rpm` measures"');
      expect(run.stderr).not.toContain('"urls.');
    } finally {
      await plain.close();
    }
  }, 40_000);

  it('a configuration that is not one: exit 1 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ version: 2, urls: {} }, '"version" must be 1, got 2'],
      [{ version: 1, urls: { small_download_url: 'https://a.test/s', upload_url: 'https://a.test/u' } }, '"urls.large_download_url" is missing (nor is there "urls.large_https_download_url")'],
      [{ version: 1, urls: { small_download_url: 'https://a.test/s', large_download_url: 'http://a.test/l', upload_url: 'https://a.test/u' } }, '"urls.large_download_url" must be an https URL'],
      [{ version: 1, urls: { small_download_url: 'https://a.test/s', large_download_url: 'https://b.test/l', upload_url: 'https://a.test/u' } }, 'the three URLs must share one host, got a.test, b.test'],
      ['<html>not json</html>', 'is not JSON'],
    ];
    for (const [config, message] of cases) {
      const fake = await startFakeRpmServer(cert, () => config);
      try {
        const run = await runCli(['rpm', '--config', `${fake.origin}/.well-known/nq`], trust, 30_000);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(message);
        expect(run.stderr).not.toMatch(/\n\s+at /);
      } finally {
        await fake.close();
      }
    }
  }, 60_000);

  it('a server whose rate limit refuses the load: exit 4, saying so', async () => {
    const fake = await startFakeRpmServer(cert, (origin) => ({ version: 1, urls: { small_download_url: `${origin}/small`, large_download_url: `${origin}/limited`, upload_url: `${origin}/upload` } }));
    try {
      const run = await runCli(['rpm', '--config', `${fake.origin}/.well-known/nq`, '--timeout', '2'], trust, 30_000);
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toContain('refused a download with 429: its rate limit for the test (rpm) is used up');
    } finally {
      await fake.close();
    }
  }, 40_000);

  it('a server whose large download sends nothing: exit 1 saying it stalled, within the timeout\'s bound', async () => {
    const fake = await startFakeRpmServer(cert, (origin) => ({ version: 1, urls: { small_download_url: `${origin}/small`, large_download_url: `${origin}/large`, upload_url: `${origin}/upload` } }));
    try {
      const started = Date.now();
      const run = await runCli(['rpm', '--config', `${fake.origin}/.well-known/nq`, '--timeout', '2'], trust, 30_000);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('nothing moved for 2 s: the server stalled');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await fake.close();
    }
  }, 40_000);

  it('an http:// deployment is refused at once with why', async () => {
    const fake = await startFakeRpmServer(cert, () => ({ version: 1, urls: { small_download_url: 'http://a.test/s', large_download_url: 'http://a.test/l', upload_url: 'http://a.test/u' } }));
    try {
      const run = await runCli(['rpm', '--config', `${fake.origin}/.well-known/nq`], trust, 30_000);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('must be an https URL (the test runs over HTTP/2 with TLS)');
    } finally {
      await fake.close();
    }
  }, 40_000);

  it("a configuration that names another server's URLs: exit 1 naming both, and the other server is sent nothing; --allow-origin sends it the load and says so", async () => {
    const target = await startFakeRpmServer(cert, () => ({}));
    const named = { small_download_url: `${target.origin}/internal/admin?x=1`, large_download_url: `${target.origin}/large`, upload_url: `${target.origin}/internal/api/delete-everything` };
    const config = await startFakeRpmServer(cert, () => ({ version: 1, urls: named }));
    try {
      const refused = await runCli(['rpm', '--url', config.origin], trust, 30_000);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`netdiag: the configuration ${config.origin}/.well-known/nq sends the test's load to ${target.origin}, not to ${config.origin}: netdiag rpm loads only the server you name. To test ${target.origin}, give its configuration (--config ${target.origin}/.well-known/nq), or let this one send the load there with --allow-origin ${target.origin}\n`);
      expect(target.requests).toEqual([]);
      // Allowed by name: the load goes there (this fake stalls it at once), and the output says where it went.
      const allowed = await runCli(['rpm', '--url', config.origin, '--allow-origin', target.origin, '--timeout', '2', '--json'], trust, 30_000);
      expect(allowed.stderr).toContain(`netdiag: the test's load goes to ${target.origin}, as the configuration ${config.origin}/.well-known/nq names it (allowed with --allow-origin)\n`);
      expect(target.requests).toContain('/large');
      // An origin is a scheme, a host and a port: a path is refused as a usage error.
      expect((await runCli(['rpm', '--url', config.origin, '--allow-origin', `${target.origin}/x`], trust, 30_000)).code).toBe(2);
    } finally {
      await target.close();
      await config.close();
    }
  }, 60_000);
});
