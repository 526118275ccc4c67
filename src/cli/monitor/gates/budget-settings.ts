// `budget:` in the monitor's configuration, for the whole monitor or one check (docs/monitor.md, "A data budget").
import type { SectionReader } from '../section-reader.js';

export interface BudgetSettings {
  bytes: number;
  periodMs: number;
}

/** A `budget:` setting, each fault naming its line and field. */
export function parseBudgetSettings(read: SectionReader): BudgetSettings {
  return read.fail([], 'the data budget is not built yet');
}
