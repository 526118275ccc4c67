// The one Server-Timing reader (server-timing.ts): an upload's marks, the server's own time, and
// a malformed header read as far as it is well formed, never thrown on.
import { describe, expect, it } from 'vitest';
import { bodyTiming, serverProcessingMs, serverTimingEntries } from './server-timing.js';

describe('an upload\'s marks from Server-Timing', () => {
  it('reads body, body25, body50 and body75, whatever else is there and in any order', () => {
    expect(bodyTiming('cfRequestDuration;dur=0.120, body;dur=812.500, body25;dur=200, body50;dur=405.5, body75;dur=610')).toEqual({ ms: 812.5, quarters: [200, 405.5, 610] });
    expect(bodyTiming('body75;dur=3, body;desc="x";dur=4, body25;dur=1, body50;dur=2')).toEqual({ ms: 4, quarters: [1, 2, 3] });
    // Without all three quarters, none: a count placed by some of them and not others would bend where no quarter was said.
    expect(bodyTiming('body;dur=9, body25;dur=2')).toEqual({ ms: 9, quarters: [] });
    expect(bodyTiming('cfRequestDuration;dur=1')).toBeUndefined();
    expect(bodyTiming(null)).toBeUndefined();
  });

  it('leaves out a malformed mark: a duration that is no number is no mark', () => {
    expect(bodyTiming('body;dur=1.2.3, body25;dur=1, body50;dur=2, body75;dur=3')).toBeUndefined();
    expect(bodyTiming('body;dur=8, body25;dur=., body50;dur=2, body75;dur=3')).toEqual({ ms: 8, quarters: [] });
    expect(serverTimingEntries(';;;, =, body;dur, ;dur=4, body;dur=-1')).toEqual(new Map());
  });
});

describe('the server\'s own time from Server-Timing', () => {
  it('reads cfRequestDuration in any of its spellings, else the sum of cfSpeed metrics', () => {
    expect(serverProcessingMs('cfRequestDuration;dur=12.5, body;dur=3')).toBe(12.5);
    expect(serverProcessingMs('CFREQDUR;dur=4')).toBe(4);
    expect(serverProcessingMs('cfSpeedA;dur=1, cfSpeedB;dur=2.5')).toBe(3.5);
  });

  it('reads none from durations of 0.01 ms or less, no such metric, or a malformed one', () => {
    expect(serverProcessingMs('cfRequestDuration;dur=0.005')).toBeUndefined();
    expect(serverProcessingMs('body;dur=40')).toBeUndefined();
    expect(serverProcessingMs('cfRequestDuration;dur=abc')).toBeUndefined();
    expect(serverProcessingMs(undefined)).toBeUndefined();
  });
});
