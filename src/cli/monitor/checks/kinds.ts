// Every kind of check the monitor runs, by the name `run:` gives it: the configuration reader, the
// runner, the expectations and /metrics all read these definitions.
import type { CheckKind, Figure, SettingsReader } from './check-kind.js';
import { dnsCheck, type DnsSettings } from './dns.js';
import { familiesCheck } from './families.js';
import { latencyCheck, type LatencySettings } from './latency.js';
import { rpmCheck } from './rpm.js';
import { speedtestCheck, type SpeedtestSettings } from './speedtest.js';

/** Each kind's own settings, by its name. */
interface SettingsByKind {
  speedtest: SpeedtestSettings;
  rpm: Record<string, never>;
  latency: LatencySettings;
  dns: DnsSettings;
  families: Record<string, never>;
}

type CheckKindName = keyof SettingsByKind;

// Typed by a map over the names, so a kind's settings go to its own functions and no other's.
const KINDS: { readonly [K in CheckKindName]: CheckKind<SettingsByKind[K]> } = { speedtest: speedtestCheck, rpm: rpmCheck, latency: latencyCheck, dns: dnsCheck, families: familiesCheck };

export const CHECK_KIND_NAMES = Object.keys(KINDS) as readonly CheckKindName[];

/** A check's kind with its settings: what it runs and how. */
export type KindWithSettings<K extends CheckKindName = CheckKindName> = { [P in K]: { run: P; settings: SettingsByKind[P] } }[K];

export const kindNamed = (name: string): CheckKindName | undefined => CHECK_KIND_NAMES.find((k) => k === name);

/** The figures a kind reports. */
export const figuresOfKind = (kind: CheckKindName): readonly Figure[] => KINDS[kind].figures;

/** Each setting some kind takes of its own, with the kinds that take it (for "only a dns check has a query"). */
export function kindSettingKeys(): Map<string, CheckKindName[]> {
  const owners = new Map<string, CheckKindName[]>();
  for (const kind of CHECK_KIND_NAMES) for (const key of KINDS[kind].keys) owners.set(key, [...(owners.get(key) ?? []), kind]);
  return owners;
}

/** A kind and its settings as the check's entry in the configuration gives them. */
export function readKindSettings<K extends CheckKindName>(run: K, read: SettingsReader): KindWithSettings<K> {
  const settings: SettingsByKind[K] = KINDS[run].settings(read);
  return { run, settings };
}

/** The netdiag command line of a run of the check against `server`. */
export function argsOf<K extends CheckKindName>(check: KindWithSettings<K>, server: string): string[] {
  const kind: CheckKind<SettingsByKind[K]> = KINDS[check.run];
  return kind.args(check.settings, server);
}

/** A run's figures from the command's --json, or what is wrong with the JSON. */
export const readFigures = (kind: CheckKindName, json: Readonly<Record<string, unknown>>): Record<string, unknown> | string => KINDS[kind].figuresOf(json);

/** Whether a command of this kind that exited non-zero printed a run all the same. */
export const answeredDespiteExit = (kind: CheckKindName, json: Readonly<Record<string, unknown>>): boolean => KINDS[kind].answeredDespiteExit?.(json) ?? false;

/** The bytes a run moved each way, from the command's --json, or null when this kind's report carries none. */
export const bytesMoved = (kind: CheckKindName, json: Readonly<Record<string, unknown>>): { down: number; up: number } | null => KINDS[kind].bytesOf?.(json) ?? null;
