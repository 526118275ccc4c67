// The `netdiag` command's definitions, shared by its two entry points: main.ts (the netdiag
// package: the servers and the client) and client-main.ts (the netdiag-client package that
// scripts/pack-client.mjs bundles: the client alone). Nothing here imports a server module, so
// the client's bundle holds none; the servers are registered by main.ts only.
import { DNS_TYPES } from '../../common/dns-types.js';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ApiFailure, clientFor, DEFAULT_URL, type Client } from '../api/client.js';
import { RATE_LIMITED_EXIT } from '../api/rate-limit.js';
import { bindingOf, boundClient, UsageError } from '../api/source.js';
import { isIP } from 'node:net';
import { MAX_STREAMS } from '../../common/speedtest/working.js';
import { configCommand } from '../config/command.js';
import { dnsCommand } from '../dns/command.js';
import { ipCommand } from '../ip/command.js';
import { latencyCommand } from '../latency/command.js';
import { outputFor, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';
import type { ChosenServer } from '../choose/choose.js';
import type { Family } from '../../common/families.js';
import { VERSION } from './version.js';

interface ClientOptions {
  url: string;
  json?: boolean;
  timeout: number;
  /** `--source`: the local address every connection is bound to (src/cli/api/source.ts). */
  source?: string;
}

/** `value` as a URL, or the option's error saying what to give instead. */
function urlOrError(value: string, notOne: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new InvalidArgumentError(notOne);
  }
}

function parseUrl(value: string): string {
  const url = urlOrError(value, 'not a URL; give one like https://netdiag.example.net');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('only http: and https: URLs are served');
  if (url.search !== '' || url.hash !== '') throw new InvalidArgumentError('give the deployment\'s base URL, without a query or fragment');
  return url.href;
}

/** An origin (`https://host:port`), as `--allow-origin` takes it: a URL's scheme, host and port, nothing after. */
function parseOrigin(value: string): string {
  const url = urlOrError(value, 'not an origin; give one like https://rpm.example.net');
  if (url.protocol !== 'https:') throw new InvalidArgumentError('the test runs over HTTPS: give an https:// origin');
  if (url.origin !== value.replace(/\/$/, '')) throw new InvalidArgumentError(`give the origin alone (${url.origin}), without a path, query or fragment`);
  return url.origin;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || seconds <= 0 || seconds > 3600) throw new InvalidArgumentError('give seconds, more than 0 and at most 3600');
  return seconds;
}

function parseCount(value: string): number {
  if (!/^[0-9]{1,9}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('give a whole number of polls, 1 or more');
  return Number(value);
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0) throw new InvalidArgumentError('give milliseconds, more than 0');
  return n;
}

function parsePercent(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n > 100) throw new InvalidArgumentError('give a percentage from 0 to 100');
  return n;
}

/** An IP address, as `--source` takes it; whether this host has it is checked before anything is sent (source.ts). */
function parseSource(value: string): string {
  if (isIP(value) === 0) throw new InvalidArgumentError('give an IP address of this host, like 192.0.2.10 or 2001:db8::10');
  return value;
}

/** A stream count, as `--streams` takes it. */
function parseStreams(value: string): number {
  const n = Number(value);
  if (!/^[0-9]{1,2}$/.test(value) || n < 1 || n > MAX_STREAMS) throw new InvalidArgumentError(`give a whole number of streams from 1 to ${String(MAX_STREAMS)}`);
  return n;
}

/** --url, --json, --timeout and --source, the same on every client command. */
function clientCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .addOption(new Option('--url <url>', 'the deployment to ask').env('NETDIAG_URL').default(DEFAULT_URL).argParser(parseUrl))
    .option('--json', "print the API's data as JSON, for scripts")
    .addOption(new Option('--timeout <seconds>', 'give up on a request after this long (in a speed test: with no data for this long)').default(10).argParser(parseSeconds))
    .option('--source <address>', "send every connection from this local address (with several uplinks, policy routing picks the uplink: see the docs)", parseSource);
}

/** A client for `url` whose every connection is bound to `--source` (checked first: on this host, of a family that reaches `url`). */
async function clientOf(url: string, timeoutMs: number, source: string | undefined, limits?: Parameters<typeof boundClient>[3]): Promise<Client> {
  return boundClient(url, timeoutMs, await bindingOf(source === undefined ? {} : { source }), limits);
}

/** `--server`: which deployment a measuring command runs against (src/cli/choose/, docs/command-line.md "Choosing the server"). */
const serverOption = () => new Option('--server <server>', "measure against auto (the nearest server the --url deployment lists), one it lists by name, or a URL");

/**
 * The server `--server` chooses from the --url deployment's list, said on standard error when it
 * was chosen for the user; undefined without --server. A name the list does not hold is bad usage
 * (exit 2, naming those it holds), refused before anything is measured.
 */
async function chosenServer(options: ClientOptions & { server?: string; ipv4?: boolean; ipv6?: boolean; both?: boolean }, command: Command): Promise<ChosenServer | undefined> {
  if (options.server === undefined) return undefined;
  const { choiceLine, resolveServer, ServerChoiceError } = await import('../choose/choose.js');
  // The families the command measures over: a listed server must serve them, and one family's round trips go over it.
  const families: Family[] = options.both === true ? ['ipv4', 'ipv6'] : options.ipv4 === true ? ['ipv4'] : options.ipv6 === true ? ['ipv6'] : [];
  try {
    // --source and the family checked together first (a source of the other family is bad
    // usage), before the list is asked or any server timed.
    const connecting = await bindingOf({ ...(options.source === undefined ? {} : { source: options.source }), ...(families.length === 1 && families[0] !== undefined ? { family: families[0] } : {}) });
    // The list asked from --source when given, as the system picks the family: the deployment
    // holding the list need not serve the family measured over.
    const listing = await clientOf(options.url, options.timeout * 1000, options.source);
    const chosen = await resolveServer(options.server, listing, connecting, families);
    const line = choiceLine(chosen);
    if (line !== undefined) process.stderr.write(`netdiag: ${terminalText(line)}\n`);
    return chosen;
  } catch (err) {
    if (err instanceof ServerChoiceError) command.error(`error: ${err.message}`, { exitCode: 2 });
    throw err;
  }
}

/** The chosen server as a speed test's report names it. */
const serverReport = (chosen: ChosenServer) => ({ name: chosen.name, url: chosen.url, round_trip_ms: chosen.roundTripMs === null ? null : Math.round(chosen.roundTripMs * 1000) / 1000 });

/** Runs a client command with its client and output; it throws ApiFailure when it fails. */
function act<A extends unknown[]>(body: (client: Client, out: Output, ...args: A) => Promise<void>) {
  return async (...args: [...A, ClientOptions, Command]): Promise<void> => {
    const options = args[args.length - 2] as ClientOptions;
    await body(await clientOf(options.url, options.timeout * 1000, options.source), outputFor(options.json === true), ...(args.slice(0, -2) as A));
  };
}

/** The root command, with what every entry point shares: the version, help and usage errors. */
export function rootCommand(description: string): Command {
  return new Command('netdiag')
    .description(description)
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    // Usage errors and --help come back here as CommanderErrors (runProgram), not as process.exit.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
}

/**
 * `latency` and `watch` alike refuse the regions named that cannot be measured, before measuring:
 * one the deployment does not know is bad usage (exit 2, naming the regions it knows), one it has
 * no probe for is its state (exit 1, naming those it has). True when refused. When the list
 * cannot be had, nothing is refused here: the command goes on and says what failed.
 */
async function refusedRegions(client: Client, regions: string[], command: Command): Promise<boolean> {
  const { unknownRegions } = await import('../watch/command.js');
  const checked = await unknownRegions(client, regions);
  if (checked === undefined) return false;
  const quoted = (list: string[]) => list.map((r) => `"${r}"`).join(', ');
  if (checked.unknown.length > 0) command.error(`error: unknown region ${quoted(checked.unknown)}: this deployment's regions are ${quoted(checked.known)}`, { exitCode: 2 });
  if (checked.unprobed.length === 0) return false;
  const offered = checked.available.length === 0 ? 'it has no regional probes' : `it has probes for ${quoted(checked.available)}`;
  process.stderr.write(`netdiag: this deployment has no probe for ${quoted(checked.unprobed)}: ${offered}\n`);
  process.exitCode = 1;
  return true;
}

/** The client commands against any deployment: ip, dns, latency, speedtest, rpm, config and watch. */
export function addClientCommands(root: Command): void {
  clientCommand(root, 'ip', 'your address, reverse name, network, location and connection as the deployment sees them')
    .addOption(new Option('-4, --ipv4', 'connect over IPv4 only').conflicts(['ipv6', 'both']))
    .addOption(new Option('-6, --ipv6', 'connect over IPv6 only').conflicts(['both']))
    .option('--both', "ask over IPv4 and over IPv6 (through the deployment's family origins when it has them) and print both")
    .action(async (options: ClientOptions & { ipv4?: boolean; ipv6?: boolean; both?: boolean }, command: Command) => {
      const out = outputFor(options.json === true);
      const timeoutMs = options.timeout * 1000;
      const { bothFamiliesCommand, familyClient } = await import('../ip/families.js');
      // An address of the other family in --url, or a --source of another family: UsageError (exit 2, runProgram).
      if (options.both === true && options.source !== undefined) command.error('error: --source binds one address, of one family: it cannot ask over both (give -4 or -6, or no --source)', { exitCode: 2 });
      if (options.both === true) await bothFamiliesCommand(clientFor(options.url, timeoutMs), out);
      else if (options.ipv4 === true || options.ipv6 === true) {
        const family = options.ipv4 === true ? 'ipv4' : 'ipv6';
        await ipCommand(await familyClient(options.url, timeoutMs, family, await bindingOf({ family, ...(options.source === undefined ? {} : { source: options.source }) })), out);
      } else await ipCommand(await clientOf(options.url, timeoutMs, options.source), out);
    });
  clientCommand(root, 'dns', 'resolve a name through the deployment\'s resolver')
    .argument('<name>', 'the name to resolve')
    .argument('[type]', `${DNS_TYPES.slice(0, -1).join(', ')} or ${DNS_TYPES.at(-1) ?? ''} (for PTR, give an address as the name)`, 'A')
    .action(async (name: string, type: string, options: ClientOptions) => {
      process.exitCode = await dnsCommand(await clientOf(options.url, options.timeout * 1000, options.source), outputFor(options.json === true), name, type);
    });
  clientCommand(root, 'latency', 'round trips from the deployment to its regions, and yours to the deployment')
    .argument('[region]', 'one region id (all available regions when none is named)')
    .addOption(serverOption())
    .action(async (region: string | undefined, options: ClientOptions & { server?: string }, command: Command) => {
      const url = (await chosenServer(options, command))?.url ?? options.url;
      const client = await clientOf(url, options.timeout * 1000, options.source);
      if (region !== undefined && (await refusedRegions(client, [region], command))) return;
      await latencyCommand(client, outputFor(options.json === true), region);
    });
  addSpeedtestCommand(root);
  clientCommand(root, 'rpm', 'responsiveness under load in round trips per minute (RPM), by the IETF draft, against the deployment or any server that follows it')
    .option('--config <url>', "a responsiveness configuration to test against instead of the deployment's (any server that serves the draft's, e.g. https://host/.well-known/nq)", parseUrl)
    .option('--allow-origin <origin>', "let the configuration send the test's load to this origin too (by default only to its own; repeat for more)", (value: string, before: string[] | undefined) => [...(before ?? []), parseOrigin(value)])
    .addOption(serverOption().conflicts('config'))
    .action(async (options: ClientOptions & { config?: string; allowOrigin?: string[]; server?: string }, command: Command) => {
      const url = (await chosenServer(options, command))?.url ?? options.url;
      const { rpmCommand } = await import('../rpm/command.js');
      const configUrl = options.config ?? new URL('/.well-known/nq', url).href;
      const binding = await bindingOf(options.source === undefined ? {} : { source: options.source });
      process.exitCode = await rpmCommand(outputFor(options.json === true), { configUrl, timeoutMs: options.timeout * 1000, allowOrigins: options.allowOrigin ?? [], binding });
    });
  clientCommand(root, 'config', 'the speed-test configuration: modes and their measurements').action(act(configCommand));
  addServersCommand(root);
  clientCommand(root, 'watch', 'watch round trips over time: yours to the deployment, and the deployment\'s to each region named')
    .argument('[region...]', 'region ids to watch besides the deployment itself')
    .addOption(new Option('--interval <seconds>', 'time between polls').default(5).argParser(parseSeconds))
    .addOption(new Option('--count <n>', 'polls of each target, then stop (default: until Ctrl-C)').argParser(parseCount))
    .addOption(new Option('--max-rtt <ms>', 'exit 3 when a round trip is above this').argParser(parsePositive))
    .addOption(new Option('--max-loss <percent>', 'exit 3 when more than this share of a target\'s polls failed').argParser(parsePercent))
    .addOption(serverOption())
    .action(async (regions: string[], options: ClientOptions & { interval: number; count?: number; maxRtt?: number; maxLoss?: number; server?: string }, command: Command) => {
      const url = (await chosenServer(options, command))?.url ?? options.url;
      const { watchCommand } = await import('../watch/command.js');
      // A poll's deadline is the interval's (at most --timeout): polls never pile up behind a hung one.
      // Nor is a poll held up by a 429: the watch records it as "limited" and polls on.
      const client = await clientOf(url, Math.min(options.timeout, Math.max(1, options.interval)) * 1000, options.source, { wait: false, say: () => undefined });
      if (await refusedRegions(client, regions, command)) return;
      const json = options.json === true || !process.stdout.isTTY;
      process.exitCode = await watchCommand(client, outputFor(json), {
        regions,
        intervalSeconds: options.interval,
        count: options.count,
        lines: json,
        maxRttMs: options.maxRtt,
        maxLossPercent: options.maxLoss,
      });
    });
  addMonitorCommand(root);
}

/** `netdiag servers`: the --url deployment's list, each server timed as `--server auto` times it (src/cli/choose/). */
function addServersCommand(root: Command): void {
  clientCommand(root, 'servers', 'the servers the deployment lists, each with its round trip from here, nearest first').action(
    act(async (client, out) => {
      const { serversCommand } = await import('../choose/command.js');
      // Timed from --source, as the list was asked (clientOf bound it).
      await serversCommand(client, out, client.binding ?? {});
    }),
  );
}

/** `netdiag speedtest`: its streams, its family (-4, -6, --both) and its source (src/cli/speedtest/by-family.ts). */
function addSpeedtestCommand(root: Command): void {
  clientCommand(root, 'speedtest', 'measure download, upload, latency and jitter against the deployment\'s speed-test targets')
    .addOption(new Option('--mode <mode>', 'the configuration\'s plan to run').choices(['light', 'full']).default('full'))
    .option('--no-analytics', 'send no analytics events')
    .option('--no-packet-loss', "skip packet loss (measured through the deployment's TURN server, when it has one)")
    .option('--share', "print a link to the deployment's page that carries the result (nothing is stored on the server)")
    .option('--share-address', 'with --share, put your address in the link too')
    .addOption(new Option('--streams <n>', `parallel streams each direction loads the link with, 1 to ${String(MAX_STREAMS)} (1: a single stream)`).default(4).argParser(parseStreams))
    .addOption(new Option('-4, --ipv4', "measure over IPv4 only (against the deployment's IPv4 origin when it has one)").conflicts(['ipv6', 'both']))
    .addOption(new Option('-6, --ipv6', "measure over IPv6 only (against the deployment's IPv6 origin when it has one)").conflicts(['both']))
    .addOption(new Option('--both', 'measure over IPv4, then over IPv6, and print both side by side').conflicts(['source']))
    .addOption(serverOption())
    .action(async (options: ClientOptions & { mode: string; analytics: boolean; packetLoss: boolean; share?: boolean; shareAddress?: boolean; streams: number; ipv4?: boolean; ipv6?: boolean; both?: boolean; server?: string }, command: Command) => {
      const chosen = await chosenServer(options, command);
      const { speedtestRun } = await import('../speedtest/by-family.js');
      const share = options.share === true || options.shareAddress === true;
      const family: 'both' | 'ipv4' | 'ipv6' | undefined = options.both === true ? 'both' : options.ipv4 === true ? 'ipv4' : options.ipv6 === true ? 'ipv6' : undefined;
      const target = { url: chosen?.url ?? options.url, timeoutMs: options.timeout * 1000, ...(family === undefined ? {} : { family }), ...(options.source === undefined ? {} : { source: options.source }) };
      process.exitCode = await speedtestRun(target, outputFor(options.json === true), { mode: options.mode, analytics: options.analytics, packetLoss: options.packetLoss, share, shareAddress: options.shareAddress === true, streams: options.streams, ...(chosen === undefined ? {} : { server: serverReport(chosen) }) });
    });
}

/** `netdiag monitor influxdb-backfill` (docs/monitor.md, "InfluxDB"). */
function addInfluxdbBackfill(monitor: Command, configOption: () => Option): void {
  monitor
    .command('influxdb-backfill')
    .description('write the runs recorded before the InfluxDB outlet started to the influxdb: server, once')
    .addOption(configOption())
    .action(async (_: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ config?: string }>();
      const [{ influxdbBackfillCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/outlets/influxdb-backfill.js'), import('../monitor/setup.js')]);
      process.exitCode = await influxdbBackfillCommand(options.config ?? defaultConfigPath());
    });
}

/**
 * `netdiag monitor`: scheduled checks, their history and alerts, on the user's own machine
 * (src/cli/monitor/, docs/monitor.md). Not a client command: it reads a configuration file.
 */
function addMonitorCommand(root: Command): void {
  const configOption = () => new Option('--config <file>', 'the monitor\'s configuration (YAML)').env('NETDIAG_MONITOR_CONFIG');
  const monitor = root
    .command('monitor')
    .description('run checks on their schedules against your netdiag servers, keep every run in a local history, and alert after repeated breaches')
    .addOption(configOption())
    .action(async (options: { config?: string }) => {
      const [{ monitorCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/command.js'), import('../monitor/setup.js')]);
      process.exitCode = await monitorCommand(options.config ?? defaultConfigPath(), process.argv[1] ?? '');
    });
  monitor
    .command('history')
    .description("the monitor's recorded runs, oldest first")
    .addOption(configOption())
    .option('--since <duration>', 'only runs this recent (90s, 30m, 6h, 7d)')
    .addOption(new Option('--json', 'as JSON, for scripts').conflicts('csv'))
    .option('--csv', 'as CSV')
    .action(async (_: unknown, command: Command) => {
      // --config may come before `history` (the monitor's option) or after it.
      const options = command.optsWithGlobals<{ config?: string; since?: string; json?: boolean; csv?: boolean }>();
      const [{ historyCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/history-commands.js'), import('../monitor/setup.js')]);
      process.exitCode = await historyCommand(options.config ?? defaultConfigPath(), outputFor(options.json === true), { ...(options.since === undefined ? {} : { since: options.since }), csv: options.csv === true });
    });
  monitor
    .command('export')
    .description("the speed tests recorded, as the page's history file (JSON, or CSV with --csv), for the page's Import")
    .addOption(configOption())
    .option('--check <name>', 'only the runs of this check')
    .option('--since <duration>', 'only runs this recent (90s, 30m, 6h, 7d)')
    .option('--csv', 'as CSV')
    .addOption(new Option('--influx', 'every run (not only speed tests) as InfluxDB line protocol, for the history kept before influxdb: was set').conflicts('csv'))
    .action(async (_: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ config?: string; check?: string; since?: string; csv?: boolean; influx?: boolean }>();
      const chosen = { ...(options.check === undefined ? {} : { check: options.check }), ...(options.since === undefined ? {} : { since: options.since }) };
      const { defaultConfigPath } = await import('../monitor/setup.js');
      if (options.influx === true) {
        const { exportInfluxCommand } = await import('../monitor/outlets/influxdb-backfill.js');
        process.exitCode = await exportInfluxCommand(options.config ?? defaultConfigPath(), chosen);
        return;
      }
      const { exportCommand } = await import('../monitor/history-commands.js');
      process.exitCode = await exportCommand(options.config ?? defaultConfigPath(), { ...chosen, csv: options.csv === true });
    });
  addInfluxdbBackfill(monitor, configOption);
  monitor
    .command('import')
    .description("a history file the page exported (JSON or CSV), recorded as runs")
    .argument('<file>', "the page's history file")
    .addOption(configOption())
    .option('--check <name>', 'the check the results are recorded under', 'page')
    .option('--server <name>', 'the server they are recorded against', 'page')
    .action(async (file: string, _: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ config?: string; check: string; server: string }>();
      const [{ importCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/history-commands.js'), import('../monitor/setup.js')]);
      process.exitCode = await importCommand(options.config ?? defaultConfigPath(), file, { check: options.check, server: options.server });
    });
  monitor
    .command('pause')
    .description('pause the running monitor: each slot until then is recorded as skipped, never a breach (through its listener)')
    .argument('<duration>', 'how long (30m, 2h, 7d; at most 30d)')
    .addOption(configOption())
    .action(async (duration: string, _: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ config?: string }>();
      const [{ pauseCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/pause-commands.js'), import('../monitor/setup.js')]);
      process.exitCode = await pauseCommand(options.config ?? defaultConfigPath(), duration);
    });
  monitor
    .command('resume')
    .description('end a pause of the running monitor: the checks run at their next slots')
    .addOption(configOption())
    .action(async (_: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ config?: string }>();
      const [{ resumeCommand }, { defaultConfigPath }] = await Promise.all([import('../monitor/pause-commands.js'), import('../monitor/setup.js')]);
      process.exitCode = await resumeCommand(options.config ?? defaultConfigPath());
    });
}

/**
 * Parses the arguments with the program `make` gives and runs the command, mapping failures to
 * the exit status (docs/command-line.md): 2 bad usage, 1 the API or the network failed, 4 the
 * server's rate limit refused and the wait it asked for was not possible (rate-limit.ts).
 */
export async function runProgram(make: () => Command | Promise<Command>): Promise<void> {
  // A reader that stops early (`netdiag config | head`) is no error; the output just ends.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  try {
    await (await make()).parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander has printed the help, the version or the usage error already.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
    } else if (err instanceof UsageError) {
      // Found once the arguments were parsed (a --source not on this host, a --url of the other family): bad usage all the same.
      process.stderr.write(`error: ${terminalText(err.message)}\n`);
      process.exitCode = 2;
    } else if (err instanceof ApiFailure) {
      process.stderr.write(`netdiag: ${terminalText(err.message)}\n`);
      process.exitCode = err.status === 429 ? RATE_LIMITED_EXIT : 1;
    } else {
      // Anything else (a server that failed to start) ends the process, whatever it holds open.
      process.stderr.write(`netdiag: ${terminalText(err instanceof Error ? err.message : String(err))}\n`);
      process.exit(1);
    }
  }
}
