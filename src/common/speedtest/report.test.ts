import { describe, expect, it } from 'vitest';
import { bloatOf, figuresOfShared, sharedOfFigures } from './report.js';
import { resultOfRun } from './run-result.js';
import type { SharedResult } from './share.js';

const KEPT: SharedResult = { at: 1_790_000_000_000, mode: 'full', downloadBps: 212_400_000, uploadBps: 41_250_000, latencyMs: 8.4, jitterMs: 1.2, loadedDownMs: 23.5, loadedUpMs: 19.25, lossPercent: 0.25 };

describe('the report figures', () => {
  it('bufferbloat is the worse direction under load against the idle latency, and none without either', () => {
    expect(bloatOf(10, 40, 75)).toEqual({ increaseMs: 65, grade: 'C', meaning: 'a busy line makes calls lag and games hard to play' });
    expect(bloatOf(10, 75, undefined)?.increaseMs).toBe(65);
    expect(bloatOf(10, undefined, undefined)).toBeUndefined();
    expect(bloatOf(undefined, 40, 75)).toBeUndefined();
  });

  it('a kept result reads as the report names its figures, in Mbit/s and ms', () => {
    expect(figuresOfShared(KEPT)).toEqual({
      mode: 'full',
      download_mbps: 212.4,
      upload_mbps: 41.25,
      latency_ms: 8.4,
      jitter_ms: 1.2,
      download_loaded_latency_ms: 23.5,
      upload_loaded_latency_ms: 19.25,
      // The worse direction (download) against idle: 23.5 - 8.4 ms added, a grade A (under 30 ms).
      loaded_latency_increase_ms: 15.1,
      bufferbloat_grade: 'A',
      packet_loss_percent: 0.25,
    });
    expect(figuresOfShared({ at: 0, mode: 'light' })).toMatchObject({ download_mbps: null, loaded_latency_increase_ms: null, bufferbloat_grade: null });
  });

  it('figures and a kept result go one into the other and back unchanged; a mode the codec has no letter for, or a figure past its bounds, gives none', () => {
    expect(sharedOfFigures(figuresOfShared(KEPT), KEPT.at)).toEqual(KEPT);
    expect(sharedOfFigures({ ...figuresOfShared(KEPT), mode: 'turbo' }, KEPT.at)).toBeUndefined();
    expect(sharedOfFigures({ ...figuresOfShared(KEPT), download_mbps: 2e6 }, KEPT.at)).toBeUndefined();
  });

  it("a monitor's run is a page result when it ran and its figures are a speed test's; an rpm run, a failed run and a figure of the wrong type are none", () => {
    const figures = { schema_version: 1, ...figuresOfShared(KEPT), notes: [] };
    expect(resultOfRun({ startedAt: KEPT.at, ok: true, figures })).toEqual(KEPT);
    expect(resultOfRun({ startedAt: KEPT.at, ok: false, figures })).toBeUndefined();
    expect(resultOfRun({ startedAt: KEPT.at, ok: true, figures: { rpm: 900, rpm_p90: 700 } })).toBeUndefined();
    expect(resultOfRun({ startedAt: KEPT.at, ok: true, figures: { ...figures, latency_ms: '8.4' } })).toBeUndefined();
  });
});
