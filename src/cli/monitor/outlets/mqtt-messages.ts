// What the MQTT outlet publishes (docs/monitor.md, "MQTT and Home Assistant"): the topics of a
// check on a server, a run's messages, and Home Assistant's MQTT discovery configs
// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery is restated in the doc), one
// device per monitor with a sensor per figure.
import type { Figure } from '../checks/check-kind.js';
import { figuresOfKind } from '../checks/kinds.js';
import type { MonitorConfig } from '../monitor-config.js';
import { outcomeOf } from '../setup.js';
import type { NumberedRun } from '../store.js';
import type { MqttSettings } from './mqtt-settings.js';
import { pairId, serverSlug, slug } from './mqtt-topics.js';

/** A message to publish: retained ones are what a subscriber arriving later reads first. */
export interface Message {
  topic: string;
  payload: string;
  retain: boolean;
}

/** The monitor's topics: `<topic_prefix>/<id>`. */
const baseTopic = (s: MqttSettings): string => `${s.topicPrefix}/${s.id}`;
/** `online` while connected (the birth message), `offline` after (the last will, or said on a clean stop). */
export const statusTopic = (s: MqttSettings): string => `${baseTopic(s)}/status`;

/** The topics of one check on one server. */
function checkTopics(s: MqttSettings, check: string, server: string): { state: string; outcome: string; runs: string } {
  const at = `${baseTopic(s)}/${slug(check)}/${serverSlug(server)}`;
  return { state: `${at}/state`, outcome: `${at}/outcome`, runs: `${at}/runs` };
}

/** Each number figure's unit, so a payload read alone says what its numbers are. */
const unitsOf = (figures: readonly Figure[]): Record<string, string> => Object.fromEntries(figures.flatMap((f) => (f.kind === 'number' ? [[f.name, f.unit]] : [])));

/** The figures a run of its check's kind reports, or (a check no longer configured) the run's own. */
function figuresFor(config: MonitorConfig, run: NumberedRun): readonly Figure[] | undefined {
  const check = config.checks.find((c) => c.name === run.check);
  return check === undefined ? undefined : figuresOfKind(check.run);
}

/** A run as every payload gives it: its row id (to tell a message sent twice), outcome, time and reason. */
function runHead(run: NumberedRun): Record<string, unknown> {
  return {
    id: run.id,
    check: run.check,
    server: run.server,
    ...(run.chosen === undefined || run.chosen === null ? {} : { chosen: run.chosen }),
    outcome: outcomeOf(run),
    started_at: new Date(run.startedAt).toISOString(),
    duration_s: Math.round(run.durationMs) / 1000,
    reason: run.skipped ?? (run.ok ? null : run.error),
  };
}

/** The figures as a payload gives them: every figure of the kind named, null when the run did not report it, and the units. */
function runFigures(config: MonitorConfig, run: NumberedRun): Record<string, unknown> {
  const figures = figuresFor(config, run);
  const values = figures === undefined ? { ...run.figures } : Object.fromEntries(figures.map((f) => [f.name, run.figures[f.name] ?? null]));
  return {
    ...values,
    breaches: run.breaches,
    bytes_down: run.bytesDown ?? null,
    bytes_up: run.bytesUp ?? null,
    units: { ...unitsOf(figures ?? []), duration_s: 's', bytes_down: 'B', bytes_up: 'B' },
  };
}

/**
 * A run's messages: on `runs` every run, not retained (an automation's trigger; a backlog arrives
 * run by run); on `outcome` the last run whatever it was (retained); on `state` the last run that
 * reported figures (retained), so a failed or skipped run leaves the last measured speeds shown.
 * Only the monitor's own runs: none for an imported one.
 */
export function runMessages(s: MqttSettings, config: MonitorConfig, run: NumberedRun): Message[] {
  // A run brought in by `monitor import` is an old one: as the latest state it would put the clock back.
  if (run.source === 'import') return [];
  const topics = checkTopics(s, run.check, run.server);
  const head = runHead(run);
  const reported = run.ok && run.skipped == null;
  const whole = reported ? { ...head, ...runFigures(config, run) } : head;
  const messages: Message[] = [
    { topic: topics.runs, payload: JSON.stringify(whole), retain: false },
    { topic: topics.outcome, payload: JSON.stringify(head), retain: true },
  ];
  if (reported) messages.push({ topic: topics.state, payload: JSON.stringify(whole), retain: true });
  return messages;
}

/** Home Assistant's reading of a number figure: its device class by unit (sensor device classes: data_rate takes Mbit/s, duration takes ms). */
function numberSensor(unit: string): Record<string, unknown> {
  const deviceClass = unit === 'Mbit/s' ? 'data_rate' : unit === 'ms' ? 'duration' : undefined;
  return { unit_of_measurement: unit, ...(deviceClass === undefined ? {} : { device_class: deviceClass }), state_class: 'measurement' };
}

const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'];

/** A figure's sensor fields: numbers measured with their unit, a grade or a fixed set of words an enum, other text plain. */
function figureSensor(figure: Figure): Record<string, unknown> {
  if (figure.kind === 'number') return numberSensor(figure.unit);
  if (figure.kind === 'grade') return { device_class: 'enum', options: GRADES };
  return figure.values === null ? {} : { device_class: 'enum', options: [...figure.values] };
}

/** A discovery config: its topic and payload (retained, so Home Assistant finds it whenever it starts). */
interface Discovery {
  topic: string;
  config: Record<string, unknown>;
}

/** The device every sensor of the monitor belongs to. */
const deviceOf = (s: MqttSettings) => ({ identifiers: [s.id], name: s.name, manufacturer: 'netdiag', model: 'netdiag monitor' });

/** The discovery configs of one check on one server: a sensor per figure, the outcome, the last run's time. */
function checkDiscovery(s: MqttSettings, prefix: string, check: MonitorConfig['checks'][number], server: string): Discovery[] {
  const topics = checkTopics(s, check.name, server);
  const base = pairId(check.name, server);
  const common = { availability_topic: statusTopic(s), payload_available: 'online', payload_not_available: 'offline', device: deviceOf(s) };
  const sensor = (key: string, label: string, fields: Record<string, unknown>): Discovery => ({
    topic: `${prefix}/sensor/${s.id}/${base}_${key}/config`,
    config: { name: `${check.name} ${label} (${server})`, unique_id: `${s.id}_${base}_${key}`, ...common, ...fields },
  });
  const figures = figuresOfKind(check.run).map((f) => sensor(f.name, f.name, { state_topic: topics.state, value_template: `{{ value_json.${f.name} }}`, ...figureSensor(f) }));
  return [
    ...figures,
    // The outcome of the last run, whatever it was; its reason and time are the sensor's attributes.
    sensor('outcome', 'outcome', { state_topic: topics.outcome, value_template: '{{ value_json.outcome }}', device_class: 'enum', options: ['ok', 'failed', 'limited', 'skipped'], json_attributes_topic: topics.outcome }),
    sensor('last_run', 'last run', { state_topic: topics.outcome, value_template: '{{ value_json.started_at }}', device_class: 'timestamp' }),
  ];
}

/** Every discovery config of the configuration: each check on each server, under the one device. */
export function discoveryMessages(s: MqttSettings, config: MonitorConfig): Message[] {
  const prefix = s.discoveryPrefix;
  if (prefix === null) return [];
  return config.checks.flatMap((check) => config.servers.flatMap((server) => checkDiscovery(s, prefix, check, server))).map((d) => ({ topic: d.topic, payload: JSON.stringify(d.config), retain: true }));
}
