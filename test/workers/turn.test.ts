// GET /v1/speed-test/turn-credentials inside workerd: the same route as on Node, its HMAC made with
// WebCrypto there, checked here against the TURN REST rule with an HMAC computed apart (Web
// Crypto in the test, over the username the Worker chose), the contract, and the 404 unconfigured.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { workerWith } from './worker.js';

const PATH = '/v1/speed-test/turn-credentials';
const SECRET = 'workerd-turn-secret-0123456789abcdefghij';

async function hmacSha1Base64(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...mac));
}

describe('TURN credentials in workerd', () => {
  it('mints credentials coturn would accept: expiry:random and base64(HMAC-SHA1(secret, username))', async () => {
    const worker = workerWith({ NETDIAG_TURN_URL: 'turn:turn.example.net:3478', NETDIAG_TURN_SECRET: SECRET, NETDIAG_TURN_TTL_SECONDS: '120' });
    const before = Math.floor(Date.now() / 1000);
    const res = await worker.send(PATH, { caller: '198.51.100.120' });
    expect(res.status).toBe(200);
    expectContract('GET', PATH, res);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const data = (res.body as { data: { urls: string[]; username: string; credential: string; ttl_seconds: number } }).data;
    expect(data.urls).toEqual(['turn:turn.example.net:3478']);
    expect(data.ttl_seconds).toBe(120);
    expect(Number(data.username.split(':')[0])).toBeGreaterThanOrEqual(before + 120);
    expect(data.credential).toBe(await hmacSha1Base64(SECRET, data.username));
    expect(data.username).not.toContain('198');
  });

  it('is a 404 problem when no TURN server is configured', async () => {
    const res = await workerWith().send(PATH, { caller: '198.51.100.121' });
    expectContract('GET', PATH, res);
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toContain('NETDIAG_TURN_URL');
  });
});
