// Writes the published JSON Schemas of `netdiag speedtest --json` and `netdiag rpm --json`
// (openapi/speedtest-report.v1.schema.json, openapi/rpm-report.v2.schema.json) from their one
// source, src/common/speedtest/report-schema.ts, run in place with Node's type stripping.
// test/cli/report-schema.test.ts fails while a written file differs from its source.
import { register } from 'node:module';
import { writeFileSync } from 'node:fs';

register('./ts-resolve.mjs', import.meta.url);
const { RPM_REPORT_SCHEMA, SPEEDTEST_REPORT_SCHEMA } = await import('../src/common/speedtest/report-schema.ts');

for (const [name, schema] of [['speedtest-report.v1.schema.json', SPEEDTEST_REPORT_SCHEMA], ['rpm-report.v2.schema.json', RPM_REPORT_SCHEMA]]) {
  writeFileSync(new URL(`../openapi/${name}`, import.meta.url), `${JSON.stringify(schema, null, 2)}\n`);
}
