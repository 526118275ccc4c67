// Issue 69, item 2: one source holds at most NETDIAG_TRANSFERS_AT_ONCE speed-test and responsiveness
// transfers at once (32 unless set), the targets' and the responsiveness endpoints' counted
// together, and moves at most NETDIAG_TRANSFER_BYTES_PER_MINUTE before new ones are refused; past
// either a 429 problem that says which, while the service answers everyone else as before.
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('transfer limits (TLS)', ['openssl'], 'openssl');
const cert = ready ? selfSignedCertificate() : { certFile: '', keyFile: '' };

interface Answer {
  status: number;
  body: string;
}

/** A GET on the session, its head and (for a refusal) its body; a 200's body is left unread, so the transfer stays open. */
function ask(session: ClientHttp2Session, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, 'accept-encoding': 'identity' });
    stream.on('error', () => undefined);
    stream.once('response', (headers) => {
      const status = Number(headers[':status']);
      if (status === 200) {
        stream.pause();
        resolve({ status, body: '' });
        return;
      }
      let body = '';
      stream.on('data', (d: Buffer) => (body += d.toString()));
      stream.once('end', () => { resolve({ status, body }); });
    });
    stream.once('close', () => { reject(new Error(`${path}: closed before an answer`)); });
  });
}

describe.skipIf(!ready)('what one source may hold of the transfers', () => {
  let server: TestServer;
  let budgeted: TestServer;

  beforeAll(async () => {
    const tls = { NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile };
    server = await startTestServer({ ...tls, NETDIAG_RATE_LIMITS: 'rpm=100000,speedtest=100000' });
    budgeted = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=100000', NETDIAG_TRANSFER_BYTES_PER_MINUTE: '10000000' });
  });
  afterAll(async () => {
    await server.close();
    await budgeted.close();
  });

  it('40 at once from one source: 32 served, 8 refused with a problem that says why, and the service answers as before', async () => {
    const session = connectHttp2(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    try {
      // Half the responsiveness test's large object, half the speed test's download: one count.
      const paths = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? '/nq/large' : '/__down?bytes=100000000'));
      const answers = await Promise.all(paths.map((p) => ask(session, p)));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(32);
      const refused = answers.filter((a) => a.status !== 200);
      expect(refused).toHaveLength(8);
      for (const a of refused) {
        expect(a.status).toBe(429);
        expect(JSON.parse(a.body)).toMatchObject({ code: 'rate_limit_exceeded', detail: 'This source has 32 speed-test and responsiveness transfers open on this server, the most it allows at once; retry when one has ended.' });
      }
      // Everything else is answered meanwhile, the small probe of the responsiveness test included.
      expect((await ask(session, '/v1/health')).status).toBe(200);
      expect((await ask(session, '/nq/small')).status).toBe(200);
    } finally {
      session.destroy();
    }
    // Closed, they free their places: a new one is served.
    const again = connectHttp2(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
    again.on('error', () => undefined);
    try {
      await expect.poll(async () => (await ask(again, '/nq/large')).status, { timeout: 5_000 }).toBe(200);
    } finally {
      again.destroy();
    }
  });

  it('past the bytes a minute allows, a new transfer is refused until the minute ends', async () => {
    const first = await fetch(`${budgeted.url}/__down?bytes=10000000`);
    expect(first.status).toBe(200);
    expect((await first.arrayBuffer()).byteLength).toBe(10_000_000);
    const refused = await fetch(`${budgeted.url}/__up`, { method: 'POST', body: new Uint8Array(1000) });
    expect(refused.status).toBe(429);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe('rate_limit_exceeded');
    expect(problem.detail).toMatch(/^This source has moved 10000000 bytes through the speed-test and responsiveness transfers in this minute, more than the 10000000 it allows; retry after [0-9]+ s\.$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
