// The share link's codec: what goes in comes out (to its stated precision), and a link that was
// cut, edited or made by another version says which part is wrong instead of showing figures.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeResult, encodeResult, shareLink, type SharedResult } from './share.js';

const FULL: SharedResult = {
  at: Date.UTC(2026, 10, 25, 18, 0, 5),
  mode: 'full',
  downloadBps: 412_512_345,
  uploadBps: 9_534_567,
  latencyMs: 4.448,
  jitterMs: 0.371,
  loadedDownMs: 48.123,
  loadedUpMs: 311.5,
  lossPercent: 1.25,
  address: '2001:db8::7',
};

describe('share links', () => {
  it('round-trips every figure, and the address only when given', () => {
    expect(decodeResult(encodeResult(FULL))).toEqual({ ok: true, result: FULL });
    const without: SharedResult = { ...FULL };
    delete without.address;
    const encoded = encodeResult(without);
    expect(encoded.endsWith('~')).toBe(true);
    expect(decodeResult(encoded)).toEqual({ ok: true, result: without });
  });

  it('carries the responsiveness estimate after the address when there is one; a link made before it (eleven parts) still reads', () => {
    const withRpm: SharedResult = { ...FULL, rpm: 1_234 };
    const encoded = encodeResult(withRpm);
    expect(encoded.split('~')).toHaveLength(12);
    expect(decodeResult(encoded)).toEqual({ ok: true, result: withRpm });
    const older = encodeResult(FULL);
    expect(older.split('~')).toHaveLength(11);
    expect(decodeResult(older)).toEqual({ ok: true, result: FULL });
    expect(decodeResult(`${older}~zzzzzzzzzzzz`)).toEqual({ ok: false, reason: 'its responsiveness is out of range' });
  });

  it('carries the server, the streams and the family after the estimate when the test said them, the empty ones at the end left off', () => {
    const setup: SharedResult = { ...FULL, server: 'fra-2', streams: 1, family: 'ipv6' };
    const encoded = encodeResult(setup);
    expect(encoded.split('~').slice(11)).toEqual(['', 'fra-2', '1', '6']);
    expect(decodeResult(encoded)).toEqual({ ok: true, result: setup });
    const streamsOnly: SharedResult = { ...FULL, rpm: 900, streams: 16 };
    expect(encodeResult(streamsOnly).split('~').slice(11)).toEqual(['p0', '', 'g']);
    expect(decodeResult(encodeResult(streamsOnly))).toEqual({ ok: true, result: streamsOnly });
    expect(decodeResult(encodeResult({ ...FULL, family: 'ipv4' }))).toEqual({ ok: true, result: { ...FULL, family: 'ipv4' } });
  });

  it('keeps figures to the bit/s and the µs for any result in range', () => {
    const micros = fc.integer({ min: 0, max: 3_600_000_000 }).map((n) => n / 1000);
    const result = fc.record(
      {
        at: fc.integer({ min: 0, max: 4_000_000_000 }).map((s) => s * 1000),
        mode: fc.constantFrom<'light' | 'full'>('light', 'full'),
        downloadBps: fc.integer({ min: 0, max: 1e12 }),
        uploadBps: fc.integer({ min: 0, max: 1e12 }),
        latencyMs: micros,
        jitterMs: micros,
        loadedDownMs: micros,
        loadedUpMs: micros,
        lossPercent: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 100),
        address: fc.oneof(fc.ipV4(), fc.constant('2001:db8::1')),
        server: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,31}$/),
        streams: fc.integer({ min: 1, max: 16 }),
        family: fc.constantFrom<'ipv4' | 'ipv6'>('ipv4', 'ipv6'),
      },
      { requiredKeys: ['at', 'mode'] },
    );
    fc.assert(
      fc.property(result, (r) => {
        expect(decodeResult(encodeResult(r))).toEqual({ ok: true, result: r });
      }),
    );
  });

  it('is short: a full result with an IPv6 address fits in under 90 characters', () => {
    expect(shareLink('https://netdiag.example.net/', FULL).length).toBeLessThan(90);
    expect(shareLink('https://netdiag.example.net/', FULL)).toMatch(/^https:\/\/netdiag\.example\.net\/#r=1~/);
  });

  it.each([
    ['2~x', 'it is not a version 1 result (a newer netdiag may have made it)'],
    ['1~abc~f~1', 'it has 4 parts where a version 1 result has 11 to 15 (cut short when copied?)'],
    ['1~abc~f~~~~~~~~~~~~~', 'it has 16 parts where a version 1 result has 11 to 15 (cut short when copied?)'],
    ['1~abc~f~~~~~~~~~~Fra', 'its server is not a server name'],
    ['1~abc~f~~~~~~~~~~fra~0', 'its stream count is out of range'],
    ['1~abc~f~~~~~~~~~~fra~h', 'its stream count is out of range'],
    ['1~abc~f~~~~~~~~~~fra~1~5', 'its family is neither 4 nor 6'],
    ['1~~f~~~~~~~~', 'it has no time'],
    ['1~abc~x~~~~~~~~', 'its mode is neither light nor full'],
    ['1~abc~f~ZZ~~~~~~~', 'its download is not a number'],
    ['1~abc~f~zzzzzzzzzz~~~~~~~', 'its download is out of range'],
    ['1~abc~f~~~~~~~~<script>', 'its address is not an IP address'],
  ])('refuses %s: %s', (text, reason) => {
    expect(decodeResult(text)).toEqual({ ok: false, reason });
  });
});
