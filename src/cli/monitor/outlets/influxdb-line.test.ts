// A run as a line-protocol point (docs/monitor.md, "InfluxDB"), escaped as InfluxDB's line-protocol
// reference says ("Special characters"): in tag keys, tag values and field keys a comma, an equals
// sign and a space each behind a backslash; numeric figures as floats, bytes and duration as
// integers (`i`), the start in ms.
import { describe, expect, it } from 'vitest';
import { pointLine, pointLines } from './influxdb-line.js';
import type { RunRecord } from '../store.js';

const AT = Date.UTC(2026, 11, 1, 12, 0, 0); // 1796126400000
const base: RunRecord = { check: 'line speed', server: 'https://netdiag.example', startedAt: AT, durationMs: 5012.4, ok: true, error: null, figures: {}, breaches: [] };

describe('a run as line protocol', () => {
  it('escapes commas, equals signs and spaces in a check name; writes numbers as floats, bytes and duration as integers; text figures left out', () => {
    const run: RunRecord = { ...base, check: 'up, down = both', sourceAddress: '192.0.2.7', bytesDown: 123_456, bytesUp: 7_890, figures: { download_mbps: 91, upload_mbps: 18.25, bufferbloat_grade: 'B', mode: 'light' } };
    expect(pointLine(run)).toBe('netdiag_monitor,check=up\\,\\ down\\ \\=\\ both,outcome=ok,server=https://netdiag.example,source=192.0.2.7 download_mbps=91,upload_mbps=18.25,bytes_down=123456i,bytes_up=7890i,duration_ms=5012i 1796126400000');
  });

  it('tags a failed, a skipped and a limited run by outcome, with the duration alone as field, and no source tag when unbound', () => {
    expect(pointLine({ ...base, ok: false, error: 'refused', figures: {} })).toBe('netdiag_monitor,check=line\\ speed,outcome=failed,server=https://netdiag.example duration_ms=5012i 1796126400000');
    expect(pointLine({ ...base, ok: false, skipped: 'paused', error: 'paused', durationMs: 0 })).toBe('netdiag_monitor,check=line\\ speed,outcome=skipped,server=https://netdiag.example duration_ms=0i 1796126400000');
    expect(pointLine({ ...base, ok: false, limited: true, error: '429' })).toContain(',outcome=limited,');
  });

  it('writes a newline in a name as a space and a backslash as a slash (neither can be carried in a 1.x tag), and leaves out figures that are not finite', () => {
    expect(pointLine({ ...base, check: 'a\nb\\', figures: { rpm: Number.NaN, rpm_p90: Number.POSITIVE_INFINITY, answer_count: 2 } })).toBe('netdiag_monitor,check=a\\ b/,outcome=ok,server=https://netdiag.example answer_count=2,duration_ms=5012i 1796126400000');
  });

  it('ends each line of a batch with a newline', () => {
    expect(pointLines([base, { ...base, startedAt: AT + 1 }]).split('\n')).toHaveLength(3);
  });
});
