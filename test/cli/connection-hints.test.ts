// What the command line says when the URL is a little wrong (issue 51): TLS failures in words with
// the fix instead of OpenSSL's codes, and a --url with a path. A real server over TLS with a
// self-signed certificate, and the same server over plain HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const withOpenssl = requireCommands('connection hints', ['openssl'], 'openssl');

describe.skipIf(!withOpenssl)('the command line explains a URL that does not fit the server', () => {
  let tls: TestServer;
  let plain: TestServer;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    tls = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
    plain = await startTestServer();
  });
  afterAll(async () => {
    await Promise.all([tls.close(), plain.close()]);
  });

  it('a self-signed certificate: says so and how to trust it', async () => {
    const url = `https://127.0.0.1:${String(tls.port)}`;
    const run = await runCli(['ip', '--url', url]);
    expect([run.code, run.stderr]).toEqual([1, `netdiag: cannot reach ${url}: its certificate is self-signed, so nothing vouches for it; if it is the server's own, trust it with NODE_EXTRA_CA_CERTS=/path/to/its-ca.pem\n`]);
  });

  it('https:// to a plain HTTP server: says to try http://', async () => {
    const url = `https://127.0.0.1:${String(plain.port)}`;
    const run = await runCli(['ip', '--url', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^netdiag: cannot reach https:\/\/127\.0\.0\.1:\d+: the server does not speak TLS there \(a plain HTTP server answers https:\/\/ like this: try http:\/\/\)\n$/);
  });

  it('a --url with a path: the 404 says to drop it', async () => {
    const url = `http://127.0.0.1:${String(plain.port)}/v1`;
    const run = await runCli(['ip', '--url', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('(--url is the server\'s address without a path, as https://host:8080; drop "/v1")');
  });
});
