// A client behind a trusted proxy that writes RFC 7239 `Forwarded` tries to choose its own
// address with text the proxy passes through: curl sends the client's header lines and the
// proxy's own element from a trusted loopback address, as the proxy would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const run = promisify(execFile);
const haveCurl = requireCommands('Forwarded spoofing', ['curl'], 'curl');

/** GET /v1/ip from the trusted proxy 127.0.0.2 with these header lines; status and address. */
async function ask(server: TestServer, headerLines: string[]): Promise<{ status: number; address: string | undefined; code: string | undefined }> {
  const args = ['-sS', '--interface', '127.0.0.2', '-w', '\n%{http_code}', ...headerLines.flatMap((h) => ['-H', h]), `${server.url}/v1/ip`];
  const { stdout } = await run('curl', args);
  const cut = stdout.lastIndexOf('\n');
  const body = JSON.parse(stdout.slice(0, cut)) as { data?: { address: string }; code?: string };
  return { status: Number(stdout.slice(cut + 1)), address: body.data?.address, code: body.code };
}

describe.skipIf(!haveCurl)('Forwarded from a trusted proxy: the client cannot choose its address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_TRUST_PROXY: '127.0.0.2', NETDIAG_TRUST_PROXY_HEADER: 'forwarded', NETDIAG_RATE_LIMITS: 'ip=1000' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('a well-formed chain gives the proxy-appended client', async () => {
    expect(await ask(server, ['Forwarded: for=1.2.3.4, for=8.8.8.8'])).toMatchObject({ status: 200, address: '8.8.8.8' });
    expect(await ask(server, ['Forwarded: for=1.2.3.4', 'Forwarded: for="8.8.8.8:4711"'])).toMatchObject({ status: 200, address: '8.8.8.8' });
  });

  // Each of these gave 1.2.3.4 before: an unterminated quoted-string swallowed the proxy's element,
  // and the host parser kept what stood before `]` or the first colon.
  it.each([
    [['Forwarded: for="[1.2.3.4], for=8.8.8.8']],
    [['Forwarded: for="[1.2.3.4]', 'Forwarded: for=8.8.8.8']],
    [['Forwarded: for="1.2.3.4:', 'Forwarded: for=8.8.8.8']],
    [['Forwarded: for="1.2.3.4\\', 'Forwarded: for=8.8.8.8']],
  ])('%j: the chain breaks (503), the client-written address is never the caller', async (lines) => {
    const reply = await ask(server, lines);
    expect(reply.address).not.toBe('1.2.3.4');
    expect(reply).toMatchObject({ status: 503, code: 'connection_unavailable' });
  });

  it('a node with text after its address or port breaks the chain where it stands', async () => {
    // The proxy's element is the nearest hop: well formed, it is the caller whatever the client wrote.
    expect(await ask(server, ['Forwarded: for="[2001:db8::1]x:80"', 'Forwarded: for=8.8.8.8'])).toMatchObject({ status: 200, address: '8.8.8.8' });
    // A trusted hop behind a malformed node: reading right to left stops there.
    const broken = await ask(server, ['Forwarded: for="1.2.3.4:80x"', 'Forwarded: for=127.0.0.2']);
    expect(broken).toMatchObject({ status: 503, code: 'connection_unavailable' });
  });

  it('many invented addresses all land on the one proxy-named caller, so its limit holds', async () => {
    const limited = await startTestServer({ NETDIAG_TRUST_PROXY: '127.0.0.2', NETDIAG_TRUST_PROXY_HEADER: 'forwarded', NETDIAG_RATE_LIMITS: 'ip=5' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        statuses.push((await ask(limited, [`Forwarded: for="[1.2.3.${String(i)}], for=8.8.8.8`])).status);
      }
      // Before the fix each request was a new caller (1.2.3.i) with its own fresh limit: all 200.
      expect(statuses.slice(5)).toEqual([429, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});
