// GET /v1/speed-test/turn-credentials against Debian's coturn on loopback: the credentials it
// mints are accepted by coturn's own client and relay between two allocations, refused once
// expired, cannot reach a peer in the operator's network through the hardened configuration,
// match an HMAC computed here independently, carry nothing of the caller, follow the contract
// and count against their own limit. Unconfigured, the route is a 404 problem that costs no quota.
import { createHmac, randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnMinter } from '../src/speedtest/turn.js';
import { expectContract } from './support/contract.js';
import { startCoturn, uclient, type Coturn } from './support/coturn.js';
import { send } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { requireCommands } from './support/system.js';

const PATH = '/v1/speed-test/turn-credentials';
const ready = requireCommands('TURN credentials', ['turnserver', 'turnutils_uclient'], 'coturn');

interface Credentials {
  urls: string[];
  username: string;
  credential: string;
  ttl_seconds: number;
  expires_at: string;
}

describe('turn credentials, not configured', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'turn=1' });
  });
  afterAll(() => server.close());

  it('is a 404 problem that names the setting, and costs no quota', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await send(`${server.url}${PATH}`);
      expect(res.status).toBe(404);
      expectContract('GET', PATH, res);
      expect((res.body as { code: string; detail: string }).code).toBe('not_found');
      expect((res.body as { detail: string }).detail).toContain('NETDIAG_TURN_URL');
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
  });
});

describe.skipIf(!ready)('turn credentials, with coturn', () => {
  const secret = randomBytes(32).toString('base64');
  let turn: Coturn;
  let server: TestServer;

  beforeAll(async () => {
    turn = await startCoturn(secret);
    server = await startTestServer({ NETDIAG_TURN_URL: turn.url, NETDIAG_TURN_SECRET: secret, NETDIAG_RATE_LIMITS: 'turn=4', NETDIAG_TRUST_PROXY: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await server.close();
    await turn.close();
  });

  const mint = async (caller: string): Promise<Credentials> => {
    const res = await send(`${server.url}${PATH}`, { headers: { 'X-Forwarded-For': caller } });
    expect(res.status).toBe(200);
    expectContract('GET', PATH, res);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-limit')).toBe('4');
    return (res.body as { data: Credentials }).data;
  };

  it('mints TURN REST credentials: expiry:random, base64(HMAC-SHA1(secret, username)), nothing of the caller', async () => {
    const before = Math.floor(Date.now() / 1000);
    const first = await mint('203.0.113.7');
    const second = await mint('203.0.113.7');
    expect(first.urls).toEqual([turn.url]);
    const [expiry, random] = first.username.split(':');
    expect(Number(expiry)).toBeGreaterThanOrEqual(before + 600);
    expect(Number(expiry)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
    expect(first.expires_at).toBe(new Date(Number(expiry) * 1000).toISOString());
    expect(first.ttl_seconds).toBe(600);
    expect(first.credential).toBe(createHmac('sha1', secret).update(first.username).digest('base64'));
    // Fresh randomness each time, and no trace of the address it was asked for.
    expect(second.username.split(':')[1]).not.toBe(random);
    expect(JSON.stringify(first)).not.toMatch(/203|113|0:7|cb00:7107/i);
  });

  it('coturn accepts them: two allocations relay every datagram between them', async () => {
    const { username, credential } = await mint('203.0.113.8');
    const result = await uclient(turn, username, credential);
    expect(result.code, result.output).toBe(0);
    const sent = /tot_send_msgs=(\d+), tot_recv_msgs=(\d+)\s*$/m.exec(result.output);
    expect(Number(sent?.[1])).toBeGreaterThan(0);
    expect(sent?.[2]).toBe(sent?.[1]);
  });

  it('coturn refuses them once expired', async () => {
    // The same minter, run with a clock set back past the lifetime.
    const expired = await turnMinter({ url: turn.url, secret, ttlSeconds: 60 }, { now: () => Date.now() - 120_000 }, () => randomBytes(16).toString('hex'))();
    const result = await uclient(turn, expired.username, expired.credential);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('Cannot complete Allocation');
    expect(turn.log()).toContain(`Cannot find credentials of user <${expired.username}>`);
  });

  it('cannot relay into the operator network: a loopback peer is refused and receives nothing', async () => {
    const peer: Socket = createSocket('udp4');
    peer.bind(0, '127.0.0.1');
    await once(peer, 'listening');
    let received = 0;
    peer.on('message', () => (received += 1));
    try {
      const { username, credential } = await mint('203.0.113.9');
      const result = await uclient(turn, username, credential, { host: '127.0.0.1', port: peer.address().port });
      expect(result.output).toContain('403 (Forbidden IP)');
      expect(received).toBe(0);
    } finally {
      peer.close();
    }
  });

  it('counts against its own limit: the fifth in a minute from one source is 429', async () => {
    // Two were minted for this source above.
    await mint('203.0.113.7');
    await mint('203.0.113.7');
    const res = await send(`${server.url}${PATH}`, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    expect(res.status).toBe(429);
    expectContract('GET', PATH, res);
    const other = await send(`${server.url}${PATH}`, { headers: { 'X-Forwarded-For': '198.51.100.1' } });
    expect(other.status).toBe(200);
  });
});
