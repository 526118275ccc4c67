// The outlets a configuration names (outlet.ts): MQTT, InfluxDB, each when its section is given.
import type { MonitorConfig } from '../monitor-config.js';
import type { Outlet } from './outlet.js';
import { influxdbOutlet } from './influxdb.js';
import { mqttOutlet } from './mqtt.js';

export function outletsOf(config: MonitorConfig, log: (line: string) => void): Outlet[] {
  const outlets: Outlet[] = [];
  if (config.mqtt !== null) outlets.push(mqttOutlet(config.mqtt, config, log));
  if (config.influxdb !== null) outlets.push(influxdbOutlet(config.influxdb, log));
  if (outlets.length > 0) log(`each run is delivered to ${outlets.map((o) => o.name).join(' and ')} too, from the history (a run recorded while one is away follows when it is back)`);
  return outlets;
}
