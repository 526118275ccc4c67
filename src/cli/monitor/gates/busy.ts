// The link-busy gate (docs/monitor.md, "Quiet when the link is busy"): before a run of a check with
// `skip_when_busy:`, the byte counters of the interface the route to the server leaves by are read
// for a few seconds, and the run is skipped when either direction already carries that much. A
// percent is of the link's capacity as this monitor last measured it (the newest speed test or RPM
// run against the server), else of the interface's own speed: in a home lab the NIC (1 Gbit/s) is
// often far faster than the internet link behind the router (100 Mbit/s), and only the measured
// figure says how full that link is.
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { AUTO_SERVER, type MonitorCheck, type MonitorConfig } from '../monitor-config.js';
import type { RunGate } from '../run-stages.js';
import type { Store } from '../store.js';
import type { BusyLimit, BusySettings } from './busy-settings.js';

/** Mbit/s each way. */
interface Rates {
  down: number;
  up: number;
}

/** The capacity a percent is of, each way it is known, and where it comes from (for the reason). */
interface Capacity {
  down?: number;
  up?: number;
  from: string;
}

/** What the gate reads as the monitor runs (gates-of.ts passes its GateSources: the same, said here so neither file imports the other). */
interface BusySources {
  store: () => Store;
  config: () => MonitorConfig;
  log: (line: string) => void;
}

const DIRECTIONS = ['down', 'up'] as const;
/** Judged runs of a check looked through for the newest that measured the link. */
const RUNS_LOOKED_AT = 20;

const mbit = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

/**
 * Why a run is skipped, given what the link carried each way over the sample: the reason (with
 * the busiest direction's figure), undefined when it is quiet enough, or `unjudged` for a percent
 * with no capacity to be a percent of.
 */
export function busyReason(settings: Pick<BusySettings, 'limit' | 'text'>, carried: Rates, iface: string, capacity: Capacity | undefined): string | undefined | { unjudged: true } {
  const { limit } = settings;
  if ('mbitPerSecond' in limit) {
    const busiest = DIRECTIONS.reduce((a, b) => (carried[b] > carried[a] ? b : a));
    if (carried[busiest] < limit.mbitPerSecond) return undefined;
    return `the link was carrying ${mbit(carried[busiest])} Mbit/s ${busiest} on ${iface} (skip_when_busy: ${settings.text})`;
  }
  const known = DIRECTIONS.filter((d) => (capacity?.[d] ?? 0) > 0);
  if (capacity === undefined || known.length === 0) return { unjudged: true };
  const share = (d: 'down' | 'up'): number => (carried[d] / (capacity[d] ?? 1)) * 100;
  const busiest = known.reduce((a, b) => (share(b) > share(a) ? b : a));
  if (share(busiest) < limit.percent) return undefined;
  return `the link was ${share(busiest).toFixed(0)}% busy (skip_when_busy: ${settings.text}): ${mbit(carried[busiest])} Mbit/s ${busiest} on ${iface} of the ${mbit(capacity[busiest] ?? 0)} Mbit/s ${capacity.from}`;
}

/** The link's capacity as the newest run of any check against `server` that measured it (a speed test, RPM) says, or undefined. */
export function measuredCapacity(store: Store, config: MonitorConfig, server: string): Capacity | undefined {
  let newest: { at: number; check: string; down?: number; up?: number } | undefined;
  for (const check of config.checks) {
    const run = store.judgedRuns(check.name, server, RUNS_LOOKED_AT).find((r) => r.ok && (typeof r.figures.download_mbps === 'number' || typeof r.figures.upload_mbps === 'number'));
    if (run === undefined || (newest !== undefined && newest.at >= run.startedAt)) continue;
    const { download_mbps: down, upload_mbps: up } = run.figures;
    newest = { at: run.startedAt, check: check.name, ...(typeof down === 'number' ? { down } : {}), ...(typeof up === 'number' ? { up } : {}) };
  }
  if (newest === undefined) return undefined;
  const { at, check, ...each } = newest;
  return { ...each, from: `"${check}" measured at ${new Date(at).toISOString()}` };
}

/** The interface's own speed (/sys/class/net/<if>/speed, Mbit/s), both ways, or undefined where it says none (-1, virtual links). */
async function interfaceCapacity(iface: string): Promise<Capacity | undefined> {
  const text = await readFile(`/sys/class/net/${iface}/speed`, 'utf8').catch(() => '');
  const speed = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(speed) && speed > 0 ? { down: speed, up: speed, from: `${iface} reports as its speed` } : undefined;
}

/** The host and port a run against `server` connects to: its URL's, or for `auto` the server it last chose, else the deployment whose list it chooses from. */
function targetOf(store: Store, config: MonitorConfig, check: MonitorCheck, server: string): { host: string; port: number } {
  const url = server !== AUTO_SERVER ? server : (store.judgedRuns(check.name, server, 1)[0]?.chosen ?? config.servers.find((s) => s !== AUTO_SERVER));
  if (url === undefined) throw new Error('auto: no server to find the route to');
  const parsed = new URL(url);
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'http:' ? 80 : 443;
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port };
}

/** The local address the route to host:port leaves from: what a connected UDP socket is given (nothing is sent). */
async function localAddressToward(host: string, port: number): Promise<string> {
  const address = isIP(host) === 0 ? (await lookup(host)).address : host;
  const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(port, address, resolve);
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/** The interface that holds `address` (os.networkInterfaces()). */
function interfaceHolding(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  for (const [name, addresses] of Object.entries(networkInterfaces())) {
    if (addresses?.some((a) => a.address.replace(/%.*$/, '').toLowerCase() === bare) === true) return name;
  }
  throw new Error(`no interface of this host holds ${address}`);
}

/** An interface's byte counters, received and sent. */
async function counters(iface: string): Promise<{ rx: number; tx: number }> {
  const read = async (which: string) => Number((await readFile(`/sys/class/net/${iface}/statistics/${which}`, 'utf8')).trim());
  return { rx: await read('rx_bytes'), tx: await read('tx_bytes') };
}

/** What the interface carried each way over `ms`, Mbit/s: received is down, sent is up. */
async function carriedOver(iface: string, ms: number): Promise<Rates> {
  const before = await counters(iface);
  const start = performance.now();
  await sleep(ms);
  const after = await counters(iface);
  const seconds = (performance.now() - start) / 1000;
  const rate = (bytes: number) => (bytes * 8) / seconds / 1e6;
  return { down: rate(after.rx - before.rx), up: rate(after.tx - before.tx) };
}

/** The gate: a check with `skip_when_busy:` is skipped while its link is that busy; a percent that cannot be judged is said once (until it can be) and the run goes ahead. */
export function busyGate(sources: BusySources): RunGate {
  const unjudgedSaid = new Set<string>();
  return async (check, server) => {
    const settings = check.skipWhenBusy;
    if (settings === null) return undefined;
    const { host, port } = targetOf(sources.store(), sources.config(), check, server);
    const iface = interfaceHolding(check.source ?? (await localAddressToward(host, port)));
    const carried = await carriedOver(iface, settings.sampleMs);
    const capacity = needsCapacity(settings.limit) ? (measuredCapacity(sources.store(), sources.config(), server) ?? (await interfaceCapacity(iface))) : undefined;
    const reason = busyReason(settings, carried, iface, capacity);
    const key = `${check.name}\n${server}`;
    if (typeof reason === 'object') {
      if (!unjudgedSaid.has(key)) sources.log(`${check.name} on ${server}: skip_when_busy ${settings.text} cannot be judged yet: no speed test or RPM run against it in the history measured the link, and ${iface} reports no speed of its own; the run goes ahead (a rate such as 5 Mbit/s needs neither)`);
      unjudgedSaid.add(key);
      return undefined;
    }
    unjudgedSaid.delete(key);
    return reason;
  };
}

const needsCapacity = (limit: BusyLimit): boolean => 'percent' in limit;
