// The bounds and precision of a speed-test result as the share codec (src/common/speedtest/share.ts)
// hands one out, checked by the share and history targets alike.
import type { SharedResult } from '../src/common/speedtest/share.js';
import { check } from './invariant.js';

/** The codec's bounds (share.ts MAX and its time limit), in the result's units. */
const BOUNDS: Record<Exclude<keyof SharedResult, 'mode' | 'address' | 'server' | 'family'>, { max: number; step: number }> = {
  at: { max: 4_102_444_800_000, step: 1000 },
  downloadBps: { max: 1e12, step: 1 },
  uploadBps: { max: 1e12, step: 1 },
  latencyMs: { max: 3_600_000, step: 0.001 },
  jitterMs: { max: 3_600_000, step: 0.001 },
  loadedDownMs: { max: 3_600_000, step: 0.001 },
  loadedUpMs: { max: 3_600_000, step: 0.001 },
  lossPercent: { max: 100, step: 0.01 },
  rpm: { max: 60_000_000, step: 1 },
  streams: { max: 16, step: 1 },
};
const SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const ADDRESS = /^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9a-f:.]{2,45})$/;

/** A result as the codec may hand one out: known fields, each in its bounds and at its precision. */
export function checkSharedResult(result: SharedResult, invariant: string, where: () => string): void {
  // Checked as data, not as its type claims: the codec built it from text.
  const mode: unknown = result.mode;
  check(mode === 'light' || mode === 'full', invariant, () => `mode: ${where()}`);
  check(result.address === undefined || ADDRESS.test(result.address), invariant, () => `address: ${where()}`);
  check(result.server === undefined || SERVER_NAME.test(result.server), invariant, () => `server: ${where()}`);
  const family: unknown = result.family;
  check(family === undefined || family === 'ipv4' || family === 'ipv6', invariant, () => `family: ${where()}`);
  check(result.streams === undefined || result.streams >= 1, invariant, () => `streams: ${where()}`);
  for (const [key, value] of Object.entries(result)) {
    if (key === 'mode' || key === 'address' || key === 'server' || key === 'family') continue;
    const bound = BOUNDS[key as keyof typeof BOUNDS] as (typeof BOUNDS)[keyof typeof BOUNDS] | undefined;
    check(bound !== undefined, invariant, () => `unknown field ${key}: ${where()}`);
    check(typeof value === 'number' && value >= 0 && value <= bound.max, invariant, () => `${key} out of bounds: ${where()}`);
    // At the codec's precision: a whole number of steps, to the accuracy of one division.
    const steps = value / bound.step;
    check(Math.abs(steps - Math.round(steps)) <= 1e-12 * steps + 1e-9, invariant, () => `${key} finer than ${String(bound.step)}: ${where()}`);
  }
}
