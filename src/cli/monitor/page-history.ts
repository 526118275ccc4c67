// A page result as a monitor run (docs/monitor.md, "The page's history file"), its figures those of
// `netdiag speedtest --json` (src/common/speedtest/report.ts); the other way is
// src/common/speedtest/run-result.ts, which the monitor's page uses too.
import { figuresOfShared } from '../../common/speedtest/report.js';
import type { SharedResult } from '../../common/speedtest/share.js';
import type { RunRecord } from './store.js';

/** A page result as a run of `check` against `server`: it ran, it reported these figures, nothing judged it. */
export function runOfResult(result: SharedResult, check: string, server: string): RunRecord {
  return { check, server, startedAt: result.at, durationMs: 0, ok: true, error: null, figures: { ...figuresOfShared(result) }, breaches: [], source: 'import' };
}
