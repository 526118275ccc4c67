// The speedtest check: `netdiag speedtest --mode M --json --no-analytics`, its figures read
// through the report's own type (src/common/speedtest/report.ts), the mode with them: a run is
// exported as a page result by its mode and rates (run-result.ts).
import { readSpeedTestReport } from '../../../common/speedtest/report-parse.js';
import { FIGURE_NAMES } from '../../../common/speedtest/report-schema.js';
import type { SpeedTestFigures } from '../../../common/speedtest/report.js';
import { numberFigure, type CheckKind, type Figure } from './check-kind.js';

export interface SpeedtestSettings {
  mode: 'light' | 'full';
}

const MODES = ['light', 'full'] as const;

/** A figure of the report's, its name checked against the report's type. */
const reportFigure = (name: keyof SpeedTestFigures, unit: string): Figure => numberFigure(name, unit);

export const speedtestCheck: CheckKind<SpeedtestSettings> = {
  keys: ['mode'],
  settings: (read) => {
    if (!read.has('mode')) return { mode: 'full' };
    const text = read.text('mode');
    const mode = MODES.find((m) => m === text);
    return mode === undefined ? read.fail('mode', `"${text}" is not a mode (${MODES.join(', ')})`) : { mode };
  },
  // No analytics: a monitor's runs are the user's own, not the service's audience.
  args: ({ mode }, server) => ['speedtest', '--mode', mode, '--json', '--no-analytics', '--url', server],
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
};
