// The monitor's metrics across a reload: a check no longer configured loses its next run, in the
// page's history and in /metrics, so nothing waits for (or alerts on) a run that will not come.
import { describe, expect, it } from 'vitest';
import { checkKey, monitorMetrics } from './monitor-metrics.js';

describe("the monitor's metrics", () => {
  it('forget the next run of a check the reload dropped, and keep the others', async () => {
    const metrics = monitorMetrics();
    metrics.scheduled('kept', 'http://a', 5_000);
    metrics.scheduled('dropped', 'http://a', 6_000);
    metrics.retain(new Set([checkKey('kept', 'http://a')]));
    expect([...metrics.nextRuns().entries()]).toEqual([[checkKey('kept', 'http://a'), 5_000]]);
    const { body } = await metrics.text();
    expect(body).toContain('netdiag_monitor_next_run_timestamp_seconds{check="kept",server="http://a"} 5');
    expect(body).not.toContain('check="dropped"');
  });
});
