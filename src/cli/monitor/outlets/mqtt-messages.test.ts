// What a run becomes on the broker (docs/monitor.md, "MQTT and Home Assistant"): a run that
// reported figures on runs/, outcome/ and state/; a skipped or failed one on runs/ and outcome/
// only, so the last speeds measured stay shown; an imported one not at all.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../monitor-config.js';
import type { NumberedRun } from '../store.js';
import { runMessages } from './mqtt-messages.js';

const config = parseMonitorConfig('servers: [https://netdiag.example.net]\nchecks:\n  - name: line speed\n    run: speedtest\n    every: 30m\nmqtt:\n  url: mqtt://broker.lan\n  id: lab\n', 'monitor.yaml', '/data/monitor.db');
const settings = config.mqtt ?? (() => { throw new Error('no mqtt:'); })();
const at = Date.UTC(2026, 11, 6, 22, 0, 0);
const base: NumberedRun = { id: 7, check: 'line speed', server: 'https://netdiag.example.net', startedAt: at, durationMs: 9_500, ok: true, error: null, figures: { download_mbps: 480.5, upload_mbps: 41 }, breaches: [], source: 'monitor' };
const topics = (run: NumberedRun) => runMessages(settings, config, run).map((m) => [m.topic, m.retain]);

describe('a run on the broker', () => {
  it('a run with figures: every one of the kind named (null when not reported) with the units, on runs, outcome and state', () => {
    const messages = runMessages(settings, config, { ...base, bytesDown: 1_000, bytesUp: 2_000 });
    expect(topics(base)).toEqual([
      ['netdiag/lab/line_speed/netdiag_example_net/runs', false],
      ['netdiag/lab/line_speed/netdiag_example_net/outcome', true],
      ['netdiag/lab/line_speed/netdiag_example_net/state', true],
    ]);
    const state = JSON.parse(messages[2]?.payload ?? '{}') as Record<string, unknown>;
    expect(state).toMatchObject({ id: 7, outcome: 'ok', started_at: '2026-12-06T22:00:00.000Z', duration_s: 9.5, reason: null, download_mbps: 480.5, upload_mbps: 41, latency_ms: null, bufferbloat_grade: null, bytes_down: 1_000, bytes_up: 2_000 });
    expect(state.units).toMatchObject({ download_mbps: 'Mbit/s', latency_ms: 'ms', packet_loss_percent: '%', duration_s: 's', bytes_down: 'B' });
  });

  it('a skipped run: on runs and outcome with its reason, the state left as the last measurement', () => {
    const reason = 'paused until 2026-12-06T23:00:00Z (netdiag monitor resume ends it)';
    const skipped = { ...base, ok: false, error: reason, skipped: reason, figures: {} };
    expect(topics(skipped)).toEqual([
      ['netdiag/lab/line_speed/netdiag_example_net/runs', false],
      ['netdiag/lab/line_speed/netdiag_example_net/outcome', true],
    ]);
    expect(JSON.parse(runMessages(settings, config, skipped)[1]?.payload ?? '{}')).toEqual({ id: 7, check: 'line speed', server: 'https://netdiag.example.net', outcome: 'skipped', started_at: '2026-12-06T22:00:00.000Z', duration_s: 9.5, reason });
  });

  it('an imported run: nothing (it is an old one, not the latest)', () => {
    expect(runMessages(settings, config, { ...base, source: 'import' })).toEqual([]);
  });
});
