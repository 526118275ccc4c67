// The speedtest check: `netdiag speedtest --mode M --json --no-analytics`, its figures read
// through the report's own type (src/common/speedtest/report.ts), the mode with them: a run is
// exported as a page result by its mode and rates (run-result.ts).
import { readSpeedTestReport } from '../../../common/speedtest/report-parse.js';
import { FIGURE_NAMES } from '../../../common/speedtest/report-schema.js';
import type { BytesMovedReport, SpeedTestFigures } from '../../../common/speedtest/report.js';
import { MAX_STREAMS } from '../../../common/speedtest/working.js';
import { numberFigure, type CheckKind, type Figure } from './check-kind.js';

export interface SpeedtestSettings {
  mode: 'light' | 'full';
  /** Parallel streams each direction loads the link with (`streams:`, `--streams`); the command's default when not given. */
  streams?: number;
}

const MODES = ['light', 'full'] as const;

/** A figure of the report's, its name checked against the report's type. */
const reportFigure = (name: keyof SpeedTestFigures, unit: string): Figure => numberFigure(name, unit);

const byteCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** The report's `bytes_moved` (the speed test's and the RPM test's alike), or null when it carries none that reads as counts. */
export function reportBytes(json: Readonly<Record<string, unknown>>): BytesMovedReport | null {
  const moved = json.bytes_moved;
  if (typeof moved !== 'object' || moved === null) return null;
  const { down, up } = moved as Record<string, unknown>;
  return byteCount(down) && byteCount(up) ? { down, up } : null;
}

export const speedtestCheck: CheckKind<SpeedtestSettings> = {
  keys: ['mode', 'streams'],
  settings: (read) => {
    const text = read.has('mode') ? read.text('mode') : 'full';
    const mode = MODES.find((m) => m === text);
    if (mode === undefined) return read.fail('mode', `"${text}" is not a mode (${MODES.join(', ')})`);
    if (!read.has('streams')) return { mode };
    const streams = read.value('streams');
    if (typeof streams !== 'number' || !Number.isInteger(streams) || streams < 1 || streams > MAX_STREAMS) return read.fail('streams', `${JSON.stringify(streams)} is not a whole number of streams from 1 to ${String(MAX_STREAMS)} (1: a single stream)`);
    return { mode, streams };
  },
  // No analytics: a monitor's runs are the user's own, not the service's audience.
  args: ({ mode, streams }, server) => ['speedtest', '--mode', mode, ...(streams === undefined ? [] : ['--streams', String(streams)]), '--json', '--no-analytics', '--url', server],
  figures: [
    reportFigure('download_mbps', 'Mbit/s'),
    reportFigure('upload_mbps', 'Mbit/s'),
    reportFigure('latency_ms', 'ms'),
    reportFigure('jitter_ms', 'ms'),
    reportFigure('download_loaded_latency_ms', 'ms'),
    reportFigure('upload_loaded_latency_ms', 'ms'),
    reportFigure('loaded_latency_increase_ms', 'ms'),
    reportFigure('packet_loss_percent', '%'),
    { name: 'bufferbloat_grade' satisfies keyof SpeedTestFigures, kind: 'grade' },
  ],
  figuresOf: (json) => {
    // The whole report is checked (this is the command's own version), and its figures kept.
    const read = readSpeedTestReport(json);
    return read.ok ? Object.fromEntries(FIGURE_NAMES.map((name) => [name, read.report[name]])) : `the command's --json is not a speed test's report: ${read.reason}`;
  },
  bytesOf: reportBytes,
};
