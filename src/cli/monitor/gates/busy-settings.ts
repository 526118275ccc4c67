// A check's `skip_when_busy:` (docs/monitor.md, "Quiet when the link is busy"): a share of the
// link's measured capacity (`20%`) or a rate (`5 Mbit/s`), above which a run is skipped, judged
// from Linux's interface counters (/sys/class/net), so refused at start elsewhere.
import type { SectionReader } from '../section-reader.js';

/** How busy the link may already be: a percent of its capacity, or a rate in Mbit/s, each direction on its own. */
export type BusyLimit = { percent: number } | { mbitPerSecond: number };

export interface BusySettings {
  limit: BusyLimit;
  /** The setting as written (`20%`, `5 Mbit/s`), for the reason a skip records. */
  text: string;
  /** How long the counters are read before a run, ms (NETDIAG_MONITOR_BUSY_SAMPLE, else 3 s). */
  sampleMs: number;
}

const PERCENT = /^([0-9]+(?:\.[0-9]+)?)\s*%$/;
const RATE = /^([0-9]+(?:\.[0-9]+)?)\s*(kbit\/s|Mbit\/s|Gbit\/s)$/;
const MBIT_PER: Readonly<Record<string, number>> = { 'kbit/s': 0.001, 'Mbit/s': 1, 'Gbit/s': 1000 };
const ACCEPTED = 'a percent of the link\'s measured capacity (20%) or a rate (500 kbit/s, 5 Mbit/s, 1 Gbit/s)';
/** Long enough to see a transfer through a pause between its bursts, short enough not to hold up the schedule. */
const DEFAULT_SAMPLE_MS = 3000;

/** A check's `skip_when_busy:`, each fault naming its line and field. */
export function parseBusySettings(read: SectionReader): BusySettings {
  // The counters are Linux's (/sys/class/net/<interface>/statistics); no other system has them there.
  if (process.platform !== 'linux') return read.fail([], `reads the interface counters in Linux's /sys/class/net, which this system (${process.platform}) does not have; remove it here`);
  const value = read.value([]);
  if (typeof value === 'number') return read.fail([], `${String(value)} has no unit: write ${ACCEPTED}`);
  if (typeof value !== 'string') return read.fail([], `must be ${ACCEPTED}`);
  const text = value.trim();
  return { limit: limitOf(read, text), text, sampleMs: sampleMs(read) };
}

function limitOf(read: SectionReader, text: string): BusyLimit {
  const percent = PERCENT.exec(text);
  if (percent !== null) {
    const n = Number(percent[1]);
    // 0% would skip every run and 100% none: neither is a setting anyone means.
    if (n <= 0 || n >= 100) return read.fail([], `"${text}" is not a percent above 0 and below 100`);
    return { percent: n };
  }
  const rate = RATE.exec(text);
  if (rate !== null) {
    const mbit = Number(rate[1]) * (MBIT_PER[rate[2] ?? ''] ?? 0);
    if (mbit <= 0) return read.fail([], `"${text}" is not a rate above 0`);
    return { mbitPerSecond: mbit };
  }
  return read.fail([], `"${text}" is not ${ACCEPTED}`);
}

/**
 * How long the counters are read: 3 s, or what NETDIAG_MONITOR_BUSY_SAMPLE says (1s to 60s), which
 * the test suites set to 1s so a run is judged in a second.
 */
function sampleMs(read: SectionReader): number {
  const text = process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
  if (text === undefined || text === '') return DEFAULT_SAMPLE_MS;
  const match = /^([0-9]+)s$/.exec(text.trim());
  const ms = match === null ? undefined : Number(match[1]) * 1000;
  if (ms === undefined || ms < 1000 || ms > 60_000) return read.fail([], `NETDIAG_MONITOR_BUSY_SAMPLE "${text}" is not a duration of 1s to 60s`);
  return ms;
}
