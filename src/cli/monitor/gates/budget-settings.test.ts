// `budget:` read from a whole configuration file (monitor-config.ts hands it to
// parseBudgetSettings): what is taken, and each fault named by its file, line and field.
import { describe, expect, it } from 'vitest';
import { MonitorConfigError, parseMonitorConfig } from '../monitor-config.js';

const FILE = `servers: [https://netdiag.example.net/]
checks:
  - name: line speed
    run: speedtest
    every: 30m
`;
const parse = (text: string) => parseMonitorConfig(text, 'monitor.yaml', '/data/monitor.db');
/** The file with a top-level budget: line 6. */
const topLevel = (budget: string) => `${FILE}budget: ${budget}\n`;
/** The file with the check's own budget: line 6. */
const onCheck = (budget: string) => `${FILE}    budget: ${budget}\n`;
const fault = (text: string): string => {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof MonitorConfigError) return err.message;
    throw err;
  }
  throw new Error('no fault found');
};

const DAY = 86_400_000;

describe('a data budget', () => {
  it('takes decimal and binary units, a rolling window of days, for the whole monitor and for one check', () => {
    expect(parse(topLevel('20 GB per 30 days')).budget).toEqual({ bytes: 20e9, periodMs: 30 * DAY, text: '20 GB per 30 days' });
    expect(parse(topLevel('1.5 TiB per 31 days')).budget).toEqual({ bytes: 1.5 * 2 ** 40, periodMs: 31 * DAY, text: '1.5 TiB per 31 days' });
    expect(parse(topLevel('500MB per day')).budget).toMatchObject({ bytes: 500e6, periodMs: DAY });
    expect(parse(topLevel('2 GiB per week')).budget).toMatchObject({ bytes: 2 * 2 ** 30, periodMs: 7 * DAY });
    expect(parse(topLevel('750 kB per 1 day')).budget).toMatchObject({ bytes: 750_000, periodMs: DAY });
    const config = parse(onCheck('"4 GB per 7 days"'));
    expect(config.budget).toBeNull();
    expect(config.checks[0]?.budget).toEqual({ bytes: 4e9, periodMs: 7 * DAY, text: '4 GB per 7 days' });
  });

  it.each([
    ['bits for bytes', topLevel('20 Gb per 30 days'), 'monitor.yaml:6: budget: Gb is bits; a budget counts bytes (GB)'],
    ['KB, which is 1000 or 1024', topLevel('500 KB per day'), 'monitor.yaml:6: budget: KB is 1000 or 1024 bytes depending on who writes it: write kB (1000) or KiB (1024)'],
    ['a unit that is none', topLevel('20 gigs per 30 days'), 'monitor.yaml:6: budget: gigs is not a unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)'],
    ['a calendar month', topLevel('20 GB per month'), 'monitor.yaml:6: budget: per month is not taken: the budget is a rolling window of days (per 30 days for a monthly cap, counted back from each run)'],
    ['a window that is none', topLevel('20 GB per fortnight'), 'monitor.yaml:6: budget: "per fortnight" is not a window (per day, per week or per N days)'],
    ['no days', topLevel('20 GB per 0 days'), 'monitor.yaml:6: budget: per 0 days is outside 1 to 366 days'],
    ['no bytes', topLevel('0 GB per 30 days'), 'monitor.yaml:6: budget: "0 GB per 30 days" is no bytes at all: a budget above 0 (without one, leave budget: out)'],
    ['a bare number', topLevel('20000000000'), 'monitor.yaml:6: budget: 20000000000 has no unit or window: write a size and a window, as 20 GB per 30 days (units B, kB, MB, GB, TB or KiB, MiB, GiB, TiB; per day, per week or per N days)'],
    ['no window', topLevel('20 GB'), 'monitor.yaml:6: budget: "20 GB" is not a size and a window, as 20 GB per 30 days (units B, kB, MB, GB, TB or KiB, MiB, GiB, TiB; per day, per week or per N days)'],
    ['a map', `${FILE}budget:\n  bytes: 20 GB\n`, 'monitor.yaml:7: budget: must be one line, a size and a window, as 20 GB per 30 days (units B, kB, MB, GB, TB or KiB, MiB, GiB, TiB; per day, per week or per N days), not a map or a list'],
    ['a negative size on a check', onCheck('-5 GB per 30 days'), 'monitor.yaml:6: checks[0].budget: "-5 GB per 30 days" is not a size and a window, as 20 GB per 30 days (units B, kB, MB, GB, TB or KiB, MiB, GiB, TiB; per day, per week or per N days)'],
    ['bits on a check', onCheck('4 Mb per day'), 'monitor.yaml:6: checks[0].budget: Mb is bits; a budget counts bytes (MB)'],
  ])('refuses %s, naming the file, the line and the field', (_, text, message) => {
    expect(fault(text)).toBe(message);
  });
});
