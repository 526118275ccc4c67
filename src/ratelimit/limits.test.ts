import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, parseLimits } from './limits.js';

describe('parseLimits', () => {
  it("defaults to the contract's limits, 600 for the speed-test targets and 10 for TURN credentials", () => {
    expect(DEFAULT_LIMITS).toEqual({ ip: 120, dns: 30, probe: 30, events: 60, speedtest: 600, turn: 10 });
  });
  it('overrides only what it names', () => {
    expect(parseLimits('dns=5, events=7')).toEqual({ ip: 120, dns: 5, probe: 30, events: 7, speedtest: 600, turn: 10 });
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
