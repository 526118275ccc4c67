// A monitor's speed-test run as one of the page's results (share.ts's SharedResult), its figures
// read through the report's type (report.ts, as `netdiag speedtest --json` prints them): `netdiag
// monitor export` writes the page's history file with it, and the monitor's local page draws the
// page's own trend chart with it.
import { sharedOfFigures } from './report.js';
import { readSpeedTestFigures } from './report-read.js';
import type { SharedResult } from './share.js';

/** What a run carries that a result is made of: its start, whether it ran, its figures. */
interface RunLike {
  startedAt: number;
  ok: boolean;
  figures: Readonly<Record<string, unknown>>;
}

/**
 * A run as a page result, or undefined when it is no speed test that ran (an RPM, DNS, ... check,
 * or a failed run), its figures are not a speed test's, or one is past the share codec's bounds.
 */
export function resultOfRun(run: RunLike): SharedResult | undefined {
  if (!run.ok) return undefined;
  const figures = readSpeedTestFigures(run.figures);
  return figures.ok ? sharedOfFigures(figures.report, run.startedAt) : undefined;
}
