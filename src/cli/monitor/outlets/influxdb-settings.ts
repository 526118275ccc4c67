// `influxdb:` in the monitor's configuration (docs/monitor.md, "InfluxDB").
import type { SectionReader } from '../section-reader.js';

export interface InfluxdbSettings {
  url: string;
}

/** The `influxdb:` section, each fault naming its line and field. */
export function parseInfluxdbSettings(read: SectionReader): InfluxdbSettings {
  return read.fail([], 'InfluxDB is not built yet');
}
