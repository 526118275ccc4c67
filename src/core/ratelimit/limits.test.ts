import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, limiterKey, parseLimits, windowOfKey } from './limits.js';

describe('parseLimits', () => {
  it("defaults to the contract's limits, 600 for the speed-test targets and 10 for TURN credentials", () => {
    expect(DEFAULT_LIMITS).toEqual({ ip: 120, dns: 30, probe: 30, events: 60, speedtest: 2400, rpm: 6000, turn: 10, port: 10 });
  });
  it('overrides only what it names', () => {
    expect(parseLimits('dns=5, events=7')).toEqual({ ip: 120, dns: 5, probe: 30, events: 7, speedtest: 2400, rpm: 6000, turn: 10, port: 10 });
  });
  it.each([
    ['dns', /not operation=count/],
    ['dns=0', /whole number/],
    ['dns=-1', /whole number/],
    ['dns=1.5', /whole number/],
    ['dns=abc', /whole number/],
    ['mail=3', /unknown operation "mail"/],
    ['dns=3,dns=4', /given twice/],
    ['dns=3=4', /not operation=count/],
  ])('rejects %s', (value, message) => {
    expect(() => parseLimits(value)).toThrow(message);
  });
});

describe('limiter keys', () => {
  it('name the operation and, for an IPv6 source\'s wider windows, the prefix; other shapes are nobody\'s', () => {
    expect(windowOfKey(limiterKey('dns', 'abc'))).toEqual({ operation: 'dns', prefix: undefined });
    expect(windowOfKey(limiterKey('dns', 'abc', 56))).toEqual({ operation: 'dns', prefix: 56 });
    expect(windowOfKey(limiterKey('turn', 'abc', 48))).toEqual({ operation: 'turn', prefix: 48 });
    expect(limiterKey('ip', 'abc', 56)).not.toBe(limiterKey('ip', 'abc'));
    for (const key of ['dns/64:abc', 'mail:abc', 'ping', 'dns/:abc']) expect(windowOfKey(key)).toBeUndefined();
  });
});
