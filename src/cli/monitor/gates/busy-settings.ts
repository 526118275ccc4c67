// A check's `skip_when_busy:` (docs/monitor.md, "Quiet when the link is busy").
import type { SectionReader } from '../section-reader.js';

export interface BusySettings {
  percent: number;
}

/** A check's `skip_when_busy:`, each fault naming its line and field. */
export function parseBusySettings(read: SectionReader): BusySettings {
  return read.fail([], 'skip_when_busy is not built yet');
}
