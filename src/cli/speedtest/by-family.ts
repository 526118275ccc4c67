// `netdiag speedtest` with what it runs against chosen: `-4` / `-6` (every connection of the run
// over that family, to the deployment's origin for it when GET /v1/ip/families names one, else
// to --url itself), `--both` (the whole test over IPv4, then over IPv6, side by side), and
// `--source` (every connection from that local address). Whatever cannot work is said before
// anything is measured.
import type { Schemas } from '../../generated/openapi-types.js';
import { FAMILY_NAME, type Family } from '../../common/families.js';
import { familyDifference, type FamilyDifference } from '../../common/speedtest/family-difference.js';
import type { SpeedTestReport } from '../../common/speedtest/report.js';
import { ApiFailure, type Client } from '../api/client.js';
import { bindingOf, boundClient, FAMILY_NUMBER, FamilyMismatch, NoAddress, UsageError, type Binding } from '../api/source.js';
import { pairs, print, printJson, table, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';
import { measure, reportLines, speedtestCommand, type Measured, type SpeedTestOptions } from './command.js';

/** What a speed test runs against and how its connections are made. */
interface SpeedTestTarget {
  /** The deployment (`--url`). */
  url: string;
  /** `--timeout`, ms. */
  timeoutMs: number;
  /** `-4` / `-6`, or `both`; the system's choice when not given. */
  family?: Family | 'both';
  /** `--source`: the local address every connection is bound to. */
  source?: string;
}

type Origins = Schemas['FamilyOrigins'];

/** The deployment's family origins; none from a deployment older than the route (404). */
async function originsOf(client: Client): Promise<Origins> {
  return client.get<Origins>('/v1/ip/families').catch((err: unknown) => {
    if (err instanceof ApiFailure && err.status === 404) return { ipv4_url: null, ipv6_url: null };
    throw err;
  });
}

/**
 * The client a family's run uses: to the deployment's origin for `family` when it names one,
 * else to `url`, every connection over `family`. Said before anything is measured: a --url of the
 * other family with no origin for this one (bad usage, exit 2), a host without an address of it
 * (exit 1), each naming the family.
 */
async function familyTarget(url: string, origins: Origins, family: Family, timeoutMs: number, binding: Binding): Promise<Client> {
  const name = FAMILY_NAME[family];
  const origin = family === 'ipv4' ? origins.ipv4_url : origins.ipv6_url;
  const familyBinding: Binding = { ...binding, family: FAMILY_NUMBER[family] };
  try {
    return await boundClient(origin ?? url, timeoutMs, familyBinding);
  } catch (err) {
    if (origin !== null && err instanceof FamilyMismatch) throw new ApiFailure(`the deployment's ${name} origin (GET /v1/ip/families) is ${origin}, an address of the other family: it cannot be measured over ${name}`);
    if (err instanceof FamilyMismatch) throw new FamilyMismatch(`${err.message}, and the deployment names no ${name} origin (GET /v1/ip/families) to measure ${name} against`);
    if (err instanceof NoAddress) throw new ApiFailure(`cannot measure over ${name}: ${err.message}${origin === null ? `, and the deployment names no ${name} origin (GET /v1/ip/families)` : ''}`);
    throw err;
  }
}

/** Says on standard error where a family's run goes when it is not --url itself. */
function sayWhere(client: Client, url: string, family: Family): void {
  if (client.base !== url.replace(/\/+$/, '')) process.stderr.write(`netdiag: measuring ${FAMILY_NAME[family]} against ${terminalText(client.base)}, the deployment's ${FAMILY_NAME[family]} origin\n`);
}

/**
 * `netdiag speedtest` with its target: the monitor's and the command line's one entry (streams,
 * family and source). The exit status; bad usage throws UsageError (exit 2), a failure before the
 * test ApiFailure (exit 1).
 */
export async function speedtestRun(target: SpeedTestTarget, out: Output, options: SpeedTestOptions): Promise<number> {
  if (target.family === 'both' && target.source !== undefined) throw new UsageError('--source binds one address, of one family: it cannot measure both (give -4 or -6, or no --source)');
  const binding = await bindingOf({ ...(target.source === undefined ? {} : { source: target.source }), ...(target.family === undefined || target.family === 'both' ? {} : { family: target.family }) });
  // With neither -4 nor -6, the system picks the family as for any connection (the source's, when given).
  if (target.family === undefined) return speedtestCommand(await boundClient(target.url, target.timeoutMs, binding), out, options);
  // Asked from the source when there is one (and so over its family), else as the system picks.
  const origins = await originsOf(await boundClient(target.url, target.timeoutMs, target.source === undefined ? {} : binding));
  if (target.family !== 'both') {
    const client = await familyTarget(target.url, origins, target.family, target.timeoutMs, binding);
    sayWhere(client, target.url, target.family);
    return speedtestCommand(client, out, options);
  }
  // Both targets are checked before either is measured: a family that cannot be reached is said first.
  const clients = { ipv4: await familyTarget(target.url, origins, 'ipv4', target.timeoutMs, binding), ipv6: await familyTarget(target.url, origins, 'ipv6', target.timeoutMs, binding) };
  const measured: Partial<Record<Family, Measured>> = {};
  for (const family of ['ipv4', 'ipv6'] as const) {
    sayWhere(clients[family], target.url, family);
    const m = await measure(clients[family], options);
    if (typeof m === 'number') {
      process.stderr.write(`netdiag: the ${FAMILY_NAME[family]} run did not finish, so there is no comparison\n`);
      return m;
    }
    measured[family] = m;
  }
  const { ipv4, ipv6 } = measured as Record<Family, Measured>;
  printBoth(out, { ipv4: { url: clients.ipv4.base, m: ipv4 }, ipv6: { url: clients.ipv6.base, m: ipv6 } });
  return 0;
}

const mbps = (bps: number) => Math.round(bps / 1e4) / 100;

/** The comparison of a direction, as --json gives it. */
function differenceJson(d: FamilyDifference) {
  return {
    ipv4_mbps: mbps(d.ipv4.bps),
    ipv6_mbps: mbps(d.ipv6.bps),
    ipv4_spread_mbps: [mbps(d.ipv4.lowBps), mbps(d.ipv4.highBps)],
    ipv6_spread_mbps: [mbps(d.ipv6.lowBps), mbps(d.ipv6.highBps)],
    beyond_spread: d.beyondSpread,
  };
}

/** The note a difference beyond both runs' spread earns. */
function differenceNote(name: string, d: FamilyDifference): string {
  const figure = (f: FamilyDifference['ipv4']) => `${mbps(f.bps).toFixed(1)} Mbps (its one-second averages ${mbps(f.lowBps).toFixed(1)}-${mbps(f.highBps).toFixed(1)})`;
  return `the ${name} differs between the families by more than either run's own spread: IPv4 ${figure(d.ipv4)}, IPv6 ${figure(d.ipv6)}`;
}

interface FamilyRun {
  url: string;
  m: Measured;
}

/** `--both`: each family's report side by side (a table, or JSON with one report per family), and a note for each figure beyond the runs' spread. */
function printBoth(out: Output, runs: Record<Family, FamilyRun>): void {
  const differences = {
    download: familyDifference(runs.ipv4.m.result.download?.measure, runs.ipv6.m.result.download?.measure),
    upload: familyDifference(runs.ipv4.m.result.upload?.measure, runs.ipv6.m.result.upload?.measure),
  };
  const notes = (['download', 'upload'] as const).flatMap((name) => {
    const d = differences[name];
    return d?.beyondSpread === true ? [differenceNote(name, d)] : [];
  });
  if (out.json) {
    const run = (r: FamilyRun): { url: string; report: SpeedTestReport; share_link?: string } => ({ url: r.url, report: r.m.report, ...(r.m.link === undefined ? {} : { share_link: r.m.link }) });
    printJson({
      ipv4: run(runs.ipv4),
      ipv6: run(runs.ipv6),
      differences: { download: differences.download === undefined ? null : differenceJson(differences.download), upload: differences.upload === undefined ? null : differenceJson(differences.upload) },
      notes,
    });
    return;
  }
  const four = reportLines(runs.ipv4.m.report, runs.ipv4.m.result, runs.ipv4.m.loss);
  const six = reportLines(runs.ipv6.m.report, runs.ipv6.m.result, runs.ipv6.m.loss);
  print(table(out, [['', 'IPv4', 'IPv6'], ['against', runs.ipv4.url, runs.ipv6.url], ...four.map(([label, value], i) => [label, value, six[i]?.[1] ?? ''])]));
  const familyNotes = (['ipv4', 'ipv6'] as const).flatMap((f) => runs[f].m.report.notes.map((n) => `note (${FAMILY_NAME[f]}): ${terminalText(n)}`));
  for (const line of [...familyNotes, ...notes.map((n) => `note: ${terminalText(n)}`)]) print(line);
  for (const f of ['ipv4', 'ipv6'] as const) {
    const link = runs[f].m.link;
    if (link !== undefined) print(pairs(out, [[`share (${FAMILY_NAME[f]})`, link]]));
  }
}
