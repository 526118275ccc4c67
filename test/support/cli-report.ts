// The shape of `netdiag speedtest --json` as the suites read it: the report type
// (src/common/speedtest/report.ts), which test/cli/report-schema.test.ts holds to the published
// JSON Schema, and the real command's output to both.
export type { MeasuredReport as CliMeasured, SpeedTestReport as CliReport } from '../../src/common/speedtest/report.js';
