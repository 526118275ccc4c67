// `netdiag speedtest --json` and `netdiag rpm --json` output parsed as the typed reports, checked
// against their published schemas (the validators compiled from report-schema.ts): the monitor
// reads each run through these.
import { validateRpmReport, validateSpeedTestReport } from '../../generated/report-validators.js';
import type { RpmReport, SpeedTestReport } from './report.js';
import { readAgainst, type ReportRead } from './report-read.js';

/** `netdiag speedtest --json`'s output (parsed JSON) as the typed report, checked against its schema. */
export const readSpeedTestReport = (json: unknown): ReportRead<SpeedTestReport> => readAgainst(validateSpeedTestReport, json);

/** `netdiag rpm --json`'s output (parsed JSON) as the typed report, checked against its schema. */
export const readRpmReport = (json: unknown): ReportRead<RpmReport> => readAgainst(validateRpmReport, json);
