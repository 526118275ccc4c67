// `budget:` in the monitor's configuration, for the whole monitor or one check (docs/monitor.md,
// "A data budget"): `20 GB per 30 days`, bytes in decimal (kB, MB, GB, TB: 1000s) or binary
// (KiB, MiB, GiB, TiB: 1024s) units over a rolling window of days.
import type { SectionReader } from '../section-reader.js';

export interface BudgetSettings {
  bytes: number;
  periodMs: number;
  /** As written (`20 GB per 30 days`), for the log, the skip's reason, the page and /metrics. */
  text: string;
}

const DAY_MS = 86_400_000;
/** A year and a day: a longer window is a typo for a shorter one. */
const MAX_DAYS = 366;

/** IEC 80000-13's units: decimal prefixes count in 1000s, binary (Ki, Mi, ...) in 1024s. */
const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  kB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
};
const ACCEPTED = 'a size and a window, as 20 GB per 30 days (units B, kB, MB, GB, TB or KiB, MiB, GiB, TiB; per day, per week or per N days)';

/** A unit that is not one of ours, said as what it most likely meant. */
function unitProblem(unit: string): string {
  if (/^[kKmMgGtT]i?b$/.test(unit)) return `${unit} is bits; a budget counts bytes (${unit.slice(0, -1)}B)`;
  if (unit === 'KB') return 'KB is 1000 or 1024 bytes depending on who writes it: write kB (1000) or KiB (1024)';
  return `${unit} is not a unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)`;
}

/** The window's length in days, or why it is not one. */
function daysOf(window: string): number | string {
  if (window === 'day') return 1;
  if (window === 'week') return 7;
  if (window === 'month' || window === 'year') return `per ${window} is not taken: the budget is a rolling window of days (per 30 days for a monthly cap, counted back from each run)`;
  const match = /^(\d+) days?$/.exec(window);
  if (match === null) return `"per ${window}" is not a window (per day, per week or per N days)`;
  const days = Number(match[1]);
  return days >= 1 && days <= MAX_DAYS ? days : `per ${String(days)} days is outside 1 to ${String(MAX_DAYS)} days`;
}

/** A `budget:` setting, each fault naming its line and field. */
export function parseBudgetSettings(read: SectionReader): BudgetSettings {
  const value = read.value([]);
  if (typeof value === 'object' && value !== null) return read.fail([], `must be one line, ${ACCEPTED}, not a map or a list`);
  if (typeof value === 'number') return read.fail([], `${String(value)} has no unit or window: write ${ACCEPTED}`);
  const text = read.text([]).replace(/\s+/g, ' ');
  const match = /^(\d+(?:\.\d+)?) ?([A-Za-z]+) per (.+)$/.exec(text);
  if (match === null) return read.fail([], `"${text}" is not ${ACCEPTED}`);
  const [, amount = '', unit = '', window = ''] = match;
  const scale = UNITS[unit];
  if (scale === undefined) return read.fail([], unitProblem(unit));
  const bytes = Math.round(Number(amount) * scale);
  if (bytes < 1) return read.fail([], `"${text}" is no bytes at all: a budget above 0 (without one, leave budget: out)`);
  if (!Number.isSafeInteger(bytes)) return read.fail([], `"${text}" is more bytes than can be counted`);
  const days = daysOf(window);
  if (typeof days === 'string') return read.fail([], days);
  return { bytes, periodMs: days * DAY_MS, text };
}
