// GET /v1/speed-test/turn-credentials inside workerd: the same route as on Node, its HMAC made with
// WebCrypto there, checked here against the TURN REST rule with an HMAC computed apart (Web
// Crypto in the test, over the username the Worker chose); the caller id the Workers keyed hash
// (HMAC-SHA-256 under NETDIAG_RATE_LIMIT_KEY) gives, the same for each credential of one caller;
// no CORS; the contract, and the 404 unconfigured.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { workerWith } from './worker.js';

const PATH = '/v1/speed-test/turn-credentials';
const SECRET = 'workerd-turn-secret-0123456789abcdefghij';
/** The suite's NETDIAG_RATE_LIMIT_KEY (vitest.workers.config.ts). */
const RATE_LIMIT_KEY = 'workerd-suite-key-0123456789abcdef0123456789';

async function hmacSha1Base64(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...mac));
}

/** The caller id computed apart: HMAC-SHA-256 of the prefixed caller as base64url, then SHA-256, 32 hex digits. */
async function callerId(caller: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(RATE_LIMIT_KEY), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`turn-user:${caller}`)));
  const keyed = btoa(String.fromCharCode(...mac)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(keyed)));
  return [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

describe('TURN credentials in workerd', () => {
  it('mints credentials coturn would accept: expiry:caller-id and base64(HMAC-SHA1(secret, username)), with no CORS', async () => {
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
    expect(data.username.split(':')[1]).toBe(await callerId('198.51.100.120'));
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // Another credential for the caller: the same id; an IPv6 caller is counted by its /56.
    const again = await worker.send(PATH, { caller: '198.51.100.120' });
    expect((again.body as { data: { username: string } }).data.username.split(':')[1]).toBe(await callerId('198.51.100.120'));
    const v6 = await worker.send(PATH, { caller: '2001:db8:5:1ab::9' });
    expect((v6.body as { data: { username: string } }).data.username.split(':')[1]).toBe(await callerId('2001:db8:5:100::/56'));
  });

  it('is a 404 problem when no TURN server is configured', async () => {
    const res = await workerWith().send(PATH, { caller: '198.51.100.121' });
    expectContract('GET', PATH, res);
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toContain('NETDIAG_TURN_URL');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("names a listed deployment's origin back to its page, and no other", async () => {
    const listed = 'https://fra.netdiag.test';
    const worker = workerWith({ NETDIAG_TURN_URL: 'turn:turn.example.net:3478', NETDIAG_TURN_SECRET: SECRET, NETDIAG_SERVERS: JSON.stringify([{ name: 'fra', url: listed, location: 'Frankfurt' }]) });
    const fromListed = await worker.send(PATH, { caller: '198.51.100.122', headers: { Origin: listed } });
    expect([fromListed.status, fromListed.headers.get('access-control-allow-origin'), fromListed.headers.get('vary')]).toEqual([200, listed, 'Origin']);
    const fromOther = await worker.send(PATH, { caller: '198.51.100.123', headers: { Origin: 'https://elsewhere.example' } });
    expect(fromOther.headers.get('access-control-allow-origin')).toBeNull();
  });
});
