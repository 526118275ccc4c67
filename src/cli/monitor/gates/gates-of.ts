// The gates a run passes before it runs (run-stages.ts RunGate), in the order asked: paused first
// (nothing to measure), then the data budget (from the history alone), then the link busy (which
// samples the interface for a few seconds, so it is asked last).
import type { MonitorConfig } from '../monitor-config.js';
import type { RunGate } from '../run-stages.js';
import type { Store } from '../store.js';
import { budgetGate } from './budget.js';
import { busyGate } from './busy.js';
import { pauseGate } from './pause.js';

/** What a gate reads as the monitor runs: the history and the configuration, each swapped by a reload. */
interface GateSources {
  store: () => Store;
  config: () => MonitorConfig;
  log: (line: string) => void;
}

export function gatesOf(sources: GateSources): RunGate[] {
  return [pauseGate(sources), budgetGate(sources), busyGate(sources)];
}
