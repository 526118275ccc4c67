// The monitor's metrics across a reload: a check no longer configured loses its next run, in the
// page's history and in /metrics, so nothing waits for (or alerts on) a run that will not come.
// An `auto` entry's series stay one whichever server each run chose (docs/monitor.md, "Prometheus").
import { describe, expect, it } from 'vitest';
import { figuresOfKind } from './checks/kinds.js';
import { checkKey, monitorMetrics } from './monitor-metrics.js';
import type { RunRecord } from './store.js';

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

describe("the monitor's metrics of an auto entry", () => {
  const autoRun = (startedAt: number, chosen: string | null, rtt: number | undefined): RunRecord => ({ check: 'rt', server: 'auto', startedAt, durationMs: 5, ok: rtt !== undefined, error: rtt === undefined ? 'auto: none of the servers answered' : null, figures: rtt === undefined ? {} : { client_to_api_rtt_ms: rtt }, breaches: [], chosen, sourceAddress: null });
  /** The exposition's sample lines of `name` (its series, one line each). */
  const samples = (body: string, name: string) => body.split('\n').filter((line) => line.startsWith(`${name}{`));
  const latency = figuresOfKind('latency');

  it('keeps each series one for auto whichever server a run chose, and names the last choice in one info series', async () => {
    const metrics = monitorMetrics();
    metrics.observe(autoRun(1_000, 'http://near.example', 5), { streak: 0, alerting: false }, latency);
    metrics.observe(autoRun(2_000, 'http://far.example', 80), { streak: 0, alerting: false }, latency);
    const { body } = await metrics.text();
    expect(samples(body, 'netdiag_monitor_figure')).toEqual(['netdiag_monitor_figure{check="rt",server="auto",figure="client_to_api_rtt_ms"} 80']);
    expect(samples(body, 'netdiag_monitor_runs_total')).toEqual(['netdiag_monitor_runs_total{check="rt",server="auto",outcome="ok"} 2']);
    expect(samples(body, 'netdiag_monitor_last_run_timestamp_seconds')).toEqual(['netdiag_monitor_last_run_timestamp_seconds{check="rt",server="auto"} 2']);
    // The choice is said by the info series alone: no other series carries the chosen server.
    expect(samples(body, 'netdiag_monitor_auto_chosen_info')).toEqual(['netdiag_monitor_auto_chosen_info{check="rt",server="auto",chosen="http://far.example"} 1']);
    expect(body.split('\n').filter((line) => line.includes('.example') && !line.startsWith('netdiag_monitor_auto_chosen_info{'))).toEqual([]);
  });

  it('drops the info series when the last auto run could choose none, and has none for a fixed server', async () => {
    const metrics = monitorMetrics();
    metrics.observe(autoRun(1_000, 'http://near.example', 5), { streak: 0, alerting: false }, latency);
    expect(samples((await metrics.text()).body, 'netdiag_monitor_auto_chosen_info')).toEqual(['netdiag_monitor_auto_chosen_info{check="rt",server="auto",chosen="http://near.example"} 1']);
    metrics.observe(autoRun(2_000, null, undefined), { streak: 1, alerting: false }, latency);
    metrics.observe({ ...autoRun(3_000, null, 7), server: 'http://fixed.example' }, { streak: 0, alerting: false }, latency);
    const { body } = await metrics.text();
    expect(samples(body, 'netdiag_monitor_auto_chosen_info')).toEqual([]);
    expect(samples(body, 'netdiag_monitor_runs_total')).toEqual(['netdiag_monitor_runs_total{check="rt",server="auto",outcome="ok"} 1', 'netdiag_monitor_runs_total{check="rt",server="auto",outcome="failed"} 1', 'netdiag_monitor_runs_total{check="rt",server="http://fixed.example",outcome="ok"} 1']);
  });
});
