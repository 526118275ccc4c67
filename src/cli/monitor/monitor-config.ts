// `netdiag monitor`'s configuration (docs/monitor.md): one YAML file a person edits by hand,
// checked whole on start, every fault named with its line and its field ("monitor.yaml:7:
// checks[0].every: ..."), so nothing half-configured runs.
import { isIP } from 'node:net';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLMap } from 'yaml';
import { parseExpectation, type Expectation } from './expect.js';
import type { SettingsReader } from './checks/check-kind.js';
import { CHECK_KIND_NAMES, figuresOfKind, kindNamed, kindSettingKeys, readKindSettings, type KindWithSettings } from './checks/kinds.js';
import { cronProblem, type Schedule } from './schedule.js';
import type { SectionPath, SectionReader } from './section-reader.js';
import { parseMqttSettings, type MqttSettings } from './outlets/mqtt-settings.js';
import { topicClash } from './outlets/mqtt-topics.js';
import { parseInfluxdbSettings, type InfluxdbSettings } from './outlets/influxdb-settings.js';
import { parseBudgetSettings, type BudgetSettings } from './gates/budget-settings.js';
import { parseBusySettings, type BusySettings } from './gates/busy-settings.js';

/** A check as configured: its kind and that kind's settings (checks/), and what every check has. */
export type MonitorCheck = KindWithSettings & {
  name: string;
  schedule: Schedule;
  /** Each run starts up to this much after its slot, ms (a random offset fixed per check). */
  spreadMs: number;
  expect: Expectation[];
  /** Breaches in a row before an alert. */
  alertAfter: number;
  /** The local address every connection of a run is bound to (`source:`, `--source`), or null. */
  source: string | null;
  /** This check's own data budget (`budget:`), or null. */
  budget: BudgetSettings | null;
  /** Skip a run while the link is already this busy (`skip_when_busy:`), or null. */
  skipWhenBusy: BusySettings | null;
};

/** A `servers:` entry that is the nearest of a deployment's list, chosen at each run (src/cli/choose/). */
export const AUTO_SERVER = 'auto';

export interface MonitorConfig {
  /** Origins, and AUTO_SERVER for the nearest of the list the first origin serves. */
  servers: string[];
  /** The SQLite file of the history. */
  database: string;
  /** Runs older than this are deleted, ms. */
  keepMs: number;
  /** Where the local page and /metrics are served, or null (`listen: off`). */
  listen: { host: string; port: number } | null;
  /** Names the page and /metrics answer to besides addresses, localhost and the listen host (DNS rebinding: local-server.ts). */
  hosts: string[];
  checks: MonitorCheck[];
  /** Where alerts go: http(s) URLs get a JSON POST, ntfy(s):// URLs an ntfy message, any other an Apprise URL handed to the `apprise` command. */
  notify: string[];
  /** Each run published to an MQTT broker, with Home Assistant's discovery (`mqtt:`), or null. */
  mqtt: MqttSettings | null;
  /** Each run written to InfluxDB (`influxdb:`), or null. */
  influxdb: InfluxdbSettings | null;
  /** The whole monitor's data budget (`budget:`), or null. */
  budget: BudgetSettings | null;
}

export class MonitorConfigError extends Error {}

const UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The settings every check has; each kind adds its own (checks/kinds.ts). */
const COMMON_CHECK_KEYS = ['name', 'run', 'every', 'cron', 'spread', 'expect', 'alert_after', 'source', 'budget', 'skip_when_busy'];
const TOP_KEYS = ['servers', 'database', 'keep', 'listen', 'hosts', 'checks', 'notify', 'mqtt', 'influxdb', 'budget'];
/** Where /metrics is served when the file does not say: this machine only. */
const DEFAULT_LISTEN = { host: '127.0.0.1', port: 9465 };
/** How long runs are kept when the file does not say: a year, for a trend across seasons. */
const DEFAULT_KEEP_MS = 365 * 86_400_000;
/** The shortest interval, for `every` and for cron alike: a check more often than this is load, not monitoring. */
export const MIN_INTERVAL_MS = 60_000;

/** A duration such as 90s, 30m, 6h or 1d, in ms, or undefined. */
export function durationMs(text: string): number | undefined {
  const match = /^([0-9]+)\s*(s|m|h|d)$/.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * (UNITS[match[2] ?? ''] ?? 0);
}

type Fail = (path: SectionPath, message: string) => never;

/** The file's YAML and how a fault in it is said, or a MonitorConfigError for text that is not a YAML map. */
function documentOf(text: string, file: string): { doc: Document; root: YAMLMap; fail: Fail } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) throw new MonitorConfigError(`${file}:${String(lines.linePos(first.pos[0]).line)}: not valid YAML: ${first.message.split('\n')[0] ?? ''}`);
  const fail: Fail = (path, message) => {
    throw new MonitorConfigError(`${file}:${String(lineOf(doc, lines, path))}: ${pathText(path)}: ${message}`);
  };
  const root = doc.contents;
  if (!isMap(root)) throw new MonitorConfigError(`${file}:1: the file must be a map with servers, checks and notify`);
  return { doc, root, fail };
}

/**
 * The history's file alone: what `netdiag monitor history` and `export` need, so a fault in a
 * setting they do not read (a check being edited) never keeps a person from the runs recorded.
 */
export function parseDatabase(text: string, file: string, defaultDatabase: string): string {
  const { doc, fail } = documentOf(text, file);
  return doc.hasIn(['database']) ? string(doc, ['database'], fail) : defaultDatabase;
}

/**
 * Parses and checks the file's text; `file` names it in messages, `defaultDatabase` is used when
 * it names none; `minIntervalMs` is the shortest schedule it takes (MIN_INTERVAL_MS but for the
 * test suites, docs/monitor.md "Schedules").
 */
export function parseMonitorConfig(text: string, file: string, defaultDatabase: string, minIntervalMs = MIN_INTERVAL_MS): MonitorConfig {
  const { doc, root, fail } = documentOf(text, file);
  unknownKeys(root, TOP_KEYS, [], fail);

  const servers = list(doc, ['servers'], fail).map((_, i) => {
    const value = string(doc, ['servers', i], fail);
    if (value === AUTO_SERVER) return value;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return fail(['servers', i], `"${value}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(['servers', i], `"${value}" is not an http:// or https:// URL`);
    return url.origin;
  });
  if (servers.length === 0) fail(['servers'], 'name at least one netdiag server');
  // `auto` is the nearest of a list, and the list is a deployment's (GET /v1/servers): the first URL named.
  if (servers.includes(AUTO_SERVER) && servers.every((s) => s === AUTO_SERVER)) fail(['servers', servers.indexOf(AUTO_SERVER)], 'auto picks the nearest of the servers a deployment lists: name that deployment\'s URL in servers too (the first URL is the one asked)');
  if (servers.filter((s) => s === AUTO_SERVER).length > 1) fail(['servers', servers.lastIndexOf(AUTO_SERVER)], 'auto is named twice');

  const checks = list(doc, ['checks'], fail).map((_, i) => check(doc, i, fail, minIntervalMs));
  if (checks.length === 0) fail(['checks'], 'name at least one check');
  const names = new Set<string>();
  checks.forEach((c, i) => {
    if (names.has(c.name)) fail(['checks', i, 'name'], `"${c.name}" names another check too: each check's name is its own`);
    names.add(c.name);
  });

  const notify = doc.hasIn(['notify']) ? list(doc, ['notify'], fail).map((_, i) => string(doc, ['notify', i], fail)) : [];
  notify.forEach((target, i) => {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) fail(['notify', i], `"${target}" is not a URL (an http(s) webhook, an ntfy(s):// topic or an Apprise URL)`);
  });
  const database = parseDatabase(text, file, defaultDatabase);
  let keepMs = DEFAULT_KEEP_MS;
  if (doc.hasIn(['keep'])) {
    const text = durationText(doc, ['keep'], fail);
    const ms = durationMs(text);
    if (ms === undefined || ms < 86_400_000) fail(['keep'], `"${text}" is not a duration of a day or more (30d, 365d)`);
    keepMs = ms ?? DEFAULT_KEEP_MS;
  }
  let listen: MonitorConfig['listen'] = DEFAULT_LISTEN;
  if (doc.hasIn(['listen'])) {
    const text = string(doc, ['listen'], fail);
    if (text === 'off') listen = null;
    else {
      const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(text);
      const port = Number(match?.[2]);
      if (match === null || port > 65535) return fail(['listen'], `"${text}" is not host:port (127.0.0.1:9465, [::1]:9465) or off`);
      listen = { host: (match[1] ?? '').replace(/^\[|\]$/g, ''), port };
    }
  }
  const hosts = doc.hasIn(['hosts'])
    ? list(doc, ['hosts'], fail).map((_, i) => {
        const name = string(doc, ['hosts', i], fail).toLowerCase();
        if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name)) fail(['hosts', i], `"${name}" is not a host name (monitor.example.lan)`);
        return name;
      })
    : [];
  const section = <T>(key: string, parse: (read: SectionReader) => T): T | null => (doc.hasIn([key]) ? parse(sectionReader(doc, [key], fail)) : null);
  const mqtt = section('mqtt', parseMqttSettings);
  if (mqtt !== null) refuseTopicClash(checks, servers, fail);
  return { servers, database, keepMs, listen, hosts, checks, notify, mqtt, influxdb: section('influxdb', parseInfluxdbSettings), budget: section('budget', parseBudgetSettings) };
}

/** Two checks, or two servers, that MQTT would publish as one (outlets/mqtt-topics.ts): refused at the later, naming the earlier. */
function refuseTopicClash(checks: readonly MonitorCheck[], servers: readonly string[], fail: Fail): void {
  const clash = topicClash(
    checks.map((c) => c.name),
    servers,
  );
  if (clash === undefined) return;
  const { first, second, id } = clash;
  const same = `publish to the same MQTT topics and Home Assistant unique_ids (${id}), so each would overwrite the other's retained state and discovery configs`;
  if (first.check === second.check) fail(['servers', second.server], `"${servers[second.server] ?? ''}" and servers[${String(first.server)}] "${servers[first.server] ?? ''}" ${same}: MQTT topics leave the scheme out; name the server once`);
  const whose = (p: { check: number; server: number }) => `"${checks[p.check]?.name ?? ''}"${first.server === second.server ? '' : ` on ${servers[p.server] ?? ''}`}`;
  fail(['checks', second.check, 'name'], `${whose(second)} and checks[${String(first.check)}] ${whose(first)} ${same}: give the checks names that differ in more than case and punctuation`);
}

/** The part of the file at `at`, as a module of its own reads it (section-reader.ts). */
function sectionReader(doc: Document, at: SectionPath, fail: Fail): SectionReader {
  const full = (path: SectionPath) => [...at, ...path];
  return {
    at,
    has: (path) => doc.hasIn(full(path)),
    value: (path) => {
      const node = doc.getIn(full(path), true) as { toJSON?: () => unknown } | undefined;
      return typeof node?.toJSON === 'function' ? node.toJSON() : doc.getIn(full(path));
    },
    text: (path) => string(doc, full(path), fail),
    keys: (path) => {
      const node = path.length === 0 && at.length === 0 ? doc.contents : doc.getIn(full(path), true);
      if (!isMap(node)) return fail(full(path), 'must be a map of settings');
      return node.items.map((pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key)));
    },
    fail: (path, message) => fail(full(path), message),
  };
}

function check(doc: Document, i: number, fail: Fail, minIntervalMs: number): MonitorCheck {
  const at = (key: string): (string | number)[] => ['checks', i, key];
  const node = doc.getIn(['checks', i], true);
  if (!isMap(node)) return fail(['checks', i], 'a check is a map with name, run and every (or cron)');
  const owners = kindSettingKeys();
  unknownKeys(node, [...COMMON_CHECK_KEYS, ...owners.keys()], ['checks', i], fail);
  const name = string(doc, at('name'), fail);
  const kind = kindOfCheck(doc, i, fail, owners);
  const schedule = scheduleOf(doc, i, name, fail, minIntervalMs);
  const section = <T>(key: string, parse: (read: SectionReader) => T): T | null => (doc.hasIn(at(key)) ? parse(sectionReader(doc, at(key), fail)) : null);
  return { ...kind, name, schedule, spreadMs: spreadOf(doc, i, schedule, fail), expect: expectationsOf(doc, i, kind.run, fail), alertAfter: alertAfterOf(doc, i, fail), source: sourceOf(doc, i, kind.run, fail), budget: section('budget', parseBudgetSettings), skipWhenBusy: section('skip_when_busy', parseBusySettings) };
}

/** `source`: an IP address every connection of the run is sent from (whether this host has it, the run's command checks: exit 2, a failed run naming it). */
function sourceOf(doc: Document, i: number, run: KindWithSettings['run'], fail: Fail): string | null {
  const path = ['checks', i, 'source'];
  if (!doc.hasIn(path)) return null;
  const address = string(doc, path, fail);
  if (isIP(address) === 0) return fail(path, `"${address}" is not an IP address (192.0.2.10, 2001:db8::10): the local address the check's connections are sent from`);
  // A families check asks over IPv4 and over IPv6; one source address has one family.
  if (run === 'families') return fail(path, 'a families check asks over both families, and one source address has one: give source to another kind of check');
  return address;
}

/** The check's kind and that kind's settings; a setting of another kind's is refused, naming whose it is. */
function kindOfCheck(doc: Document, i: number, fail: Fail, owners: ReadonlyMap<string, readonly string[]>): KindWithSettings {
  const at = (key: string): (string | number)[] => ['checks', i, key];
  const runText = string(doc, at('run'), fail);
  const run = kindNamed(runText);
  if (run === undefined) return fail(at('run'), `"${runText}" is not a check this monitor runs (${CHECK_KIND_NAMES.join(', ')})`);
  for (const [key, kinds] of owners) {
    if (doc.hasIn(at(key)) && !kinds.includes(run)) fail(at(key), `only a ${kinds.join(' or ')} check has a ${key}`);
  }
  const read: SettingsReader = {
    has: (key) => doc.hasIn(at(key)),
    text: (key) => string(doc, at(key), fail),
    value: (key) => doc.getIn(at(key)),
    fail: (key, message) => fail(key === undefined ? ['checks', i] : at(key), message),
  };
  return readKindSettings(run, read);
}

/** `every` or `cron`, one of them, no more often than `minIntervalMs`. */
function scheduleOf(doc: Document, i: number, name: string, fail: Fail, minIntervalMs: number): Schedule {
  const at = (key: string): (string | number)[] => ['checks', i, key];
  const hasEvery = doc.hasIn(at('every'));
  if (hasEvery === doc.hasIn(at('cron'))) return fail(['checks', i], 'give either every (an interval, e.g. 30m) or cron (e.g. "*/30 * * * *"), not both or neither');
  if (hasEvery) {
    const text = durationText(doc, at('every'), fail);
    const ms = durationMs(text);
    if (ms === undefined) return fail(at('every'), `"${text}" is not an interval (a number and s, m, h or d: 90s, 30m, 6h, 1d)`);
    if (ms < minIntervalMs) fail(at('every'), `the check "${name}" runs ${text} apart, more often than ${intervalText(minIntervalMs)}, the least the monitor allows`);
    return { kind: 'every', ms };
  }
  const expression = string(doc, at('cron'), fail);
  const problem = cronProblem(expression);
  if (problem !== undefined) fail(at('cron'), `"${expression}" is not a cron expression: ${problem}`);
  const seconds = secondsField(expression);
  // A seconds field that names one second runs at most once a minute; any other runs more often.
  if (minIntervalMs >= MIN_INTERVAL_MS && seconds !== undefined && !/^[0-9]{1,2}$/.test(seconds)) {
    fail(at('cron'), `the check "${name}" would run more often than once a minute, the least the monitor allows: its seconds field (the first of six) is "${seconds}"; give five fields, or one second in the sixth ("0 ${expression.trim().split(/\s+/).slice(1).join(' ')}")`);
  }
  return { kind: 'cron', expression };
}

/** How far after its slot each run may start: `spread`, or a tenth of the interval (at most 5m; 1m for cron). */
function spreadOf(doc: Document, i: number, schedule: Schedule, fail: Fail): number {
  const path = ['checks', i, 'spread'];
  if (!doc.hasIn(path)) return schedule.kind === 'every' ? Math.min(schedule.ms / 10, 300_000) : 60_000;
  const text = durationText(doc, path, fail);
  const ms = durationMs(text);
  if (ms === undefined) return fail(path, `"${text}" is not a duration (90s, 5m)`);
  if (schedule.kind === 'every' && ms >= schedule.ms) fail(path, `${text} is not shorter than the interval`);
  return ms;
}

/** The check's expectations, each of a figure its kind reports. */
function expectationsOf(doc: Document, i: number, run: KindWithSettings['run'], fail: Fail): Expectation[] {
  const at = ['checks', i, 'expect'];
  if (!doc.hasIn(at)) return [];
  const map = doc.getIn(at, true);
  if (!isMap(map)) return fail(at, 'expect is a map of figure: condition, e.g. download_mbps: ">= 70% of 500"');
  const figures = figuresOfKind(run);
  return map.items.map((pair) => {
    const name = isScalar(pair.key) ? String(pair.key.value) : '';
    const path = [...at, name];
    const figure = figures.find((f) => f.name === name);
    if (figure === undefined) return fail(path, `"${name}" is not a figure a ${run} check reports (${figures.map((f) => f.name).join(', ')})`);
    const parsed = parseExpectation(figure, string(doc, path, fail));
    return typeof parsed === 'string' ? fail(path, parsed) : parsed;
  });
}

/** Breaches in a row before an alert: `alert_after`, or 3. */
function alertAfterOf(doc: Document, i: number, fail: Fail): number {
  const path = ['checks', i, 'alert_after'];
  if (!doc.hasIn(path)) return 3;
  const value = doc.getIn(path);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1000) return fail(path, `${String(value)} is not a whole number of breaches in a row from 1 to 1000`);
  return value;
}

/** A cron expression's seconds field: the first of six or seven (croner), none for five fields or a nickname (@hourly). */
function secondsField(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  return fields.length >= 6 ? fields[0] : undefined;
}

const intervalText = (ms: number): string => (ms === MIN_INTERVAL_MS ? 'once a minute' : `once every ${String(ms / 1000)} s`);

function unknownKeys(map: YAMLMap, known: readonly string[], path: (string | number)[], fail: Fail): void {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!known.includes(key)) fail([...path, key], `not a setting here (${known.join(', ')})`);
  }
}

function list(doc: Document, path: (string | number)[], fail: Fail): unknown[] {
  const node = doc.getIn(path, true);
  if (node === undefined) return fail(path, 'missing');
  if (!isSeq(node)) return fail(path, 'must be a list');
  return node.items;
}

function string(doc: Document, path: SectionPath, fail: Fail): string {
  if (!doc.hasIn(path)) return fail(path, 'missing');
  const value = doc.getIn(path);
  if (typeof value !== 'string' || value.trim() === '') return fail(path, `must be text, not ${value === null ? 'empty' : JSON.stringify(value)}`);
  return value.trim();
}

/** A duration's text: a bare number (`every: 30`) is read as text, so its fault names the missing unit. */
function durationText(doc: Document, path: (string | number)[], fail: Fail): string {
  const value = doc.getIn(path);
  return typeof value === 'number' ? String(value) : string(doc, path, fail);
}

/** The line a path's node starts on, or its nearest parent's. */
function lineOf(doc: Document, lines: LineCounter, path: SectionPath): number {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range !== undefined) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

const pathText = (path: SectionPath): string => path.map((p, i) => (typeof p === 'number' ? `[${String(p)}]` : `${i === 0 ? '' : '.'}${p}`)).join('');
