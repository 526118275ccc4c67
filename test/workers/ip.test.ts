// /v1/ip on Workers: the caller is CF-Connecting-IP; connection facts, location and network come
// from request.cf, whole, in part, or not at all (docs/api.md, "/v1/ip").
import { inject, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { FULL_CF, codeOf, workerWith } from './worker.js';

const doh = inject('dohUrl');

describe('/v1/ip in workerd', () => {
  const worker = workerWith();

  it('with a full request.cf: every field from the edge, coordinates made numbers', async () => {
    const res = await worker.send('/v1/ip', { caller: '203.0.113.9', cf: FULL_CF });
    expectContract('GET', '/v1/ip', res);
    expect(res.status).toBe(200);
    expect((res.body as { data: unknown }).data).toEqual({
      address: '203.0.113.9',
      ip_version: 'ipv4',
      reverse_hostname: null,
      network: { asn: 64500, organization: 'Example Networks' },
      location: {
        city: 'Amsterdam',
        region: 'North Holland',
        country: 'Netherlands',
        country_code: 'NL',
        postal_code: '1012',
        timezone: 'Europe/Amsterdam',
        latitude: 52.374,
        longitude: 4.8897,
      },
      connection: { provider_colo: 'AMS', http_protocol: 'HTTP/2', tls_version: 'TLSv1.3' },
      data_provenance: 'observed_connection',
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-limit')).toBe('120');
  });

  it('over plain HTTP: no TLS version, whatever request.cf says (local development says TLSv1.3 for every request)', async () => {
    const res = await worker.send('/v1/ip', { caller: '203.0.113.9', cf: FULL_CF, scheme: 'http' });
    expectContract('GET', '/v1/ip', res);
    expect((res.body as { data: { connection: unknown } }).data.connection).toEqual({ provider_colo: 'AMS', http_protocol: 'HTTP/2', tls_version: null });
  });

  it('with a partial request.cf: what is there, null for the rest, malformed fields dropped', async () => {
    const res = await worker.send('/v1/ip', {
      caller: '2001:db8::1',
      cf: { colo: 'dfw', asn: '13335', country: 'T1', latitude: 'north', longitude: '200', tlsVersion: '', httpProtocol: 'HTTP/1.1', city: '  ' },
    });
    expectContract('GET', '/v1/ip', res);
    const data = (res.body as { data: { network: unknown; location: unknown; connection: unknown; ip_version: string } }).data;
    expect(data.ip_version).toBe('ipv6');
    expect(data.network).toEqual({ asn: null, organization: null });
    expect(data.location).toEqual({ city: null, region: null, country: null, country_code: null, postal_code: null, timezone: null, latitude: null, longitude: null });
    expect(data.connection).toEqual({ provider_colo: null, http_protocol: 'HTTP/1.1', tls_version: null });
  });

  it('with no request.cf: connection facts and location all null', async () => {
    const res = await worker.send('/v1/ip', { caller: '198.51.100.7' });
    expectContract('GET', '/v1/ip', res);
    const data = (res.body as { data: { address: string; connection: unknown; network: unknown } }).data;
    expect(data.address).toBe('198.51.100.7');
    expect(data.connection).toEqual({ provider_colo: null, http_protocol: null, tls_version: null });
    expect(data.network).toEqual({ asn: null, organization: null });
  });

  it('never reads forwarding headers: X-Forwarded-For, Forwarded and X-Real-IP lose to CF-Connecting-IP', async () => {
    const res = await worker.send('/v1/ip', {
      caller: '198.51.100.8',
      headers: { 'X-Forwarded-For': '192.0.2.66', Forwarded: 'for=192.0.2.67', 'X-Real-IP': '192.0.2.68' },
    });
    expect((res.body as { data: { address: string } }).data.address).toBe('198.51.100.8');
  });

  it('without CF-Connecting-IP the caller cannot be established: 503 connection_unavailable', async () => {
    const res = await worker.send('/v1/ip', { headers: { 'X-Forwarded-For': '192.0.2.66' } });
    expectContract('GET', '/v1/ip', res);
    expect(res.status).toBe(503);
    expect(codeOf(res)).toBe('connection_unavailable');
  });

  it.skipIf(doh === '')("reverse_hostname is the caller's PTR through the DoH upstream (Knot)", async () => {
    const res = await worker.send('/v1/ip', { caller: '192.0.2.10', cf: FULL_CF });
    expectContract('GET', '/v1/ip', res);
    expect((res.body as { data: { reverse_hostname: string | null } }).data.reverse_hostname).toBe('www.example.test');
  });
});
