// The rpm check: `netdiag rpm --json`, its figures read through the report's own type
// (src/common/speedtest/report.ts): the test's responsiveness and its 90th percentile.
import { readRpmReport } from '../../../common/speedtest/report-parse.js';
import type { RpmReport } from '../../../common/speedtest/report.js';
import { numberFigure, type CheckKind, type Figure } from './check-kind.js';
import { reportBytes } from './speedtest.js';

/** A figure of the report's, its name checked against the report's type. */
const reportFigure = (name: keyof RpmReport, unit: string): Figure => numberFigure(name, unit);

export const rpmCheck: CheckKind<Record<string, never>> = {
  keys: [],
  settings: () => ({}),
  args: (_, server) => ['rpm', '--json', '--url', server],
  figures: [reportFigure('rpm', 'round trips a minute'), reportFigure('rpm_p90', 'round trips a minute')],
  figuresOf: (json) => {
    const read = readRpmReport(json);
    if (!read.ok) return `the command's --json is not an RPM test's report: ${read.reason}`;
    const { rpm, rpm_p90 } = read.report;
    return { rpm, rpm_p90 };
  },
  bytesOf: reportBytes,
};
