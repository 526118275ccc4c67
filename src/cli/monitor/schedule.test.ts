// The monitor's schedules on a fake clock: 200 runs of random length in a row never overlap, each
// starts within its spread after a slot, a slept-through stretch gives one run and not one per
// missed slot, and both kinds of schedule are right across both daylight-saving changes of
// Europe/Berlin (02:00 skipped in spring, 02:00 to 03:00 twice in autumn).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextRun, plan, type Schedule } from './schedule.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A seeded generator (mulberry32), so a failure replays. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The monitor's loop on a fake clock: wait for the next run, run for a random time, again. */
function simulate(schedule: Schedule, spreadMs: number, startMs: number, runs: number, runMs: () => number, random: () => number) {
  const planned = plan(schedule, spreadMs, startMs, random);
  let now = startMs;
  const out: { start: number; end: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const at = nextRun(planned, now);
    expect(at).toBeGreaterThan(now);
    now = at;
    const end = now + runMs();
    out.push({ start: now, end });
    now = end;
  }
  return { planned, runs: out };
}

describe('monitor schedules', () => {
  const tz = process.env.TZ;
  beforeAll(() => {
    // Node follows a change of TZ at run time: croner's cron slots are in this zone's wall clock.
    process.env.TZ = 'Europe/Berlin';
  });
  afterAll(() => {
    process.env.TZ = tz;
  });

  it('200 interval runs of random length: none overlaps the one before, each at a slot plus its offset, the offset within the spread', () => {
    const random = seeded(7);
    const start = Date.UTC(2026, 2, 28, 12, 0, 0);
    // Runs of up to 40 min on a 30 min interval: some outlast their slot.
    const { planned, runs } = simulate({ kind: 'every', ms: 30 * MIN }, 3 * MIN, start, 200, () => random() * 40 * MIN, random);
    expect(planned.offsetMs).toBeGreaterThanOrEqual(0);
    expect(planned.offsetMs).toBeLessThan(3 * MIN);
    runs.forEach((r, i) => {
      if (i > 0) expect(r.start).toBeGreaterThanOrEqual(runs[i - 1]?.end ?? 0);
      expect((r.start - start - planned.offsetMs) % (30 * MIN)).toBe(0);
    });
    // A run that outlasted its slot skips it: the next starts at the first slot after it ended.
    const skipped = runs.filter((r, i) => i > 0 && r.start - (runs[i - 1]?.start ?? 0) > 30 * MIN);
    expect(skipped.length).toBeGreaterThan(0);
    for (let i = 1; i < runs.length; i++) expect((runs[i]?.start ?? 0) - (runs[i - 1]?.end ?? 0)).toBeLessThanOrEqual(30 * MIN);
  });

  it('offsets of many monitors spread over the whole spread, not one second', () => {
    const random = seeded(11);
    const offsets = Array.from({ length: 200 }, () => plan({ kind: 'every', ms: HOUR }, 5 * MIN, 0, random).offsetMs);
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...offsets)).toBeLessThan(5 * MIN);
    // Spread out: the 200 offsets fall in at least 8 of the spread's 10 thirty-second bins.
    expect(new Set(offsets.map((o) => Math.floor(o / 30_000))).size).toBeGreaterThanOrEqual(8);
  });

  it('a machine that slept through six slots runs once on waking, then at the next slot', () => {
    const planned = plan({ kind: 'every', ms: 30 * MIN }, 0, Date.UTC(2026, 5, 1, 0, 0), () => 0);
    const first = nextRun(planned, Date.UTC(2026, 5, 1, 0, 1));
    expect(first).toBe(Date.UTC(2026, 5, 1, 0, 30));
    // Woken at 03:10: the 03:00 slot and the five before it are gone; one run now is late, and the
    // loop's next question (after that run) gets 03:30, not 00:30, 01:00, ...
    const woke = Date.UTC(2026, 5, 1, 3, 10);
    expect(nextRun(planned, woke)).toBe(Date.UTC(2026, 5, 1, 3, 30));
  });

  it('200 cron runs ("0 */2 * * *") across the spring change: at even wall-clock hours in Berlin, none overlapping, none at the skipped 02:00', () => {
    const random = seeded(3);
    const start = new Date('2026-03-27T00:30:00+01:00').getTime();
    const { planned, runs } = simulate({ kind: 'cron', expression: '0 */2 * * *' }, 2 * MIN, start, 200, () => random() * 30 * MIN, random);
    const hours = runs.map((r) => new Date(r.start - planned.offsetMs));
    for (const [i, at] of hours.entries()) {
      expect(at.getMinutes()).toBe(0);
      expect(at.getSeconds()).toBe(0);
      expect(at.getHours() % 2).toBe(0);
      if (i > 0) expect(runs[i]?.start ?? 0).toBeGreaterThanOrEqual(runs[i - 1]?.end ?? 0);
    }
    // 29 March: 00:00, then 04:00 (02:00 does not exist that night), each two wall-clock hours apart.
    const onChange = hours.filter((h) => h.getDate() === 29 && h.getMonth() === 2).map((h) => h.getHours());
    expect(onChange).toEqual([0, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]);
  });

  it('cron across the autumn change runs the repeated 02:30 hour once, and an interval stays a fixed length of real time', () => {
    const planned = plan({ kind: 'cron', expression: '30 2 * * *' }, 0, 0, () => 0);
    const before = new Date('2026-10-24T12:00:00+02:00').getTime();
    const first = nextRun(planned, before);
    const second = nextRun(planned, first);
    expect(new Date(first).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    // The next is the next day's 02:30 (CET), not the second 02:30 of the same night.
    expect(new Date(second).toISOString()).toBe('2026-10-26T01:30:00.000Z');
    const every = plan({ kind: 'every', ms: HOUR }, 0, new Date('2026-10-25T00:00:00+02:00').getTime(), () => 0);
    let at = every.anchorMs;
    for (let i = 0; i < 5; i++) {
      const next = nextRun(every, at);
      expect(next - at).toBe(HOUR);
      at = next;
    }
  });
});
