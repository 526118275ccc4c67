// An alert's words (docs/monitor.md, "Alerts"): a title that counts N breaches in a row has a body that
// accounts for each of them, with its time and what it missed; one breach is "1 breach", never
// "1 breaches"; a streak longer than the body lists, or older than the history keeps, is counted
// in a line of its own, so the title never counts what the body does not show.
import { describe, expect, it } from 'vitest';
import { ALERT_RUNS_SHOWN, alertNotice } from './alerts.js';

const start = Date.UTC(2026, 4, 1, 12, 0, 0);
const runs = (n: number) => Array.from({ length: n }, (_, i) => ({ startedAt: start + i * 60_000, missed: [`rpm ${String(100 + i)} (expected >= 400)`] }));

describe('an alert', () => {
  it('after one breach says "1 breach", and its body that run', () => {
    const notice = alertNotice('responsiveness', 'https://a.example', 1, runs(1));
    expect(notice.title).toBe('netdiag monitor: responsiveness on https://a.example: 1 breach');
    expect(notice.body).toBe('- 2026-05-01T12:00:00Z: rpm 100 (expected >= 400)');
  });

  it('after two in a row lists both, oldest first, whatever order they come in, each with its time and every expectation it missed', () => {
    const both = [
      { startedAt: start + 60_000, missed: ['rpm 90 (expected >= 400)', 'rpm_p90 50 (expected >= 300)'] },
      { startedAt: start, missed: ['the check did not run: `connection refused`'] },
    ];
    const notice = alertNotice('responsiveness', 'https://a.example', 2, both);
    expect(notice.title).toBe('netdiag monitor: responsiveness on https://a.example: 2 breaches in a row');
    expect(notice.body).toBe('- 2026-05-01T12:00:00Z: the check did not run: `connection refused`\n- 2026-05-01T12:01:00Z: rpm 90 (expected >= 400); rpm_p90 50 (expected >= 300)');
  });

  it(`a streak longer than ${String(ALERT_RUNS_SHOWN)} lists the last ${String(ALERT_RUNS_SHOWN)} and counts the earlier ones`, () => {
    const notice = alertNotice('responsiveness', 'https://a.example', 25, runs(ALERT_RUNS_SHOWN));
    const lines = notice.body.split('\n');
    expect(notice.title).toBe('netdiag monitor: responsiveness on https://a.example: 25 breaches in a row');
    expect(lines).toHaveLength(ALERT_RUNS_SHOWN + 1);
    expect(lines[0]).toBe('- 15 earlier runs before 2026-05-01T12:00:00Z, each a breach too (netdiag monitor history lists them)');
    expect(lines.at(-1)).toBe('- 2026-05-01T12:09:00Z: rpm 109 (expected >= 400)');
  });

  it('a streak whose earlier runs the history no longer holds counts them too', () => {
    const notice = alertNotice('responsiveness', 'https://a.example', 3, runs(2));
    expect(notice.body.split('\n')[0]).toBe('- 1 earlier run before 2026-05-01T12:00:00Z, a breach too (netdiag monitor history lists it)');
    expect(alertNotice('responsiveness', 'https://a.example', 2, []).body).toBe('- 2 earlier runs, each a breach too (netdiag monitor history lists them)');
  });
});
