// `mqtt:` in the monitor's configuration (docs/monitor.md, "MQTT and Home Assistant").
import type { SectionReader } from '../section-reader.js';

export interface MqttSettings {
  url: string;
}

/** The `mqtt:` section, each fault naming its line and field. */
export function parseMqttSettings(read: SectionReader): MqttSettings {
  return read.fail([], 'MQTT is not built yet');
}
