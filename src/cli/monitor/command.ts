// `netdiag monitor` (docs/monitor.md): the checks of one configuration file on their schedules,
// each run recorded in the history and judged against its expectations, alerts and recoveries
// sent. Runs against one server never overlap (a speed test and a
// responsiveness test at once would each measure the other), nor do a check's own runs. A run the
// server's rate limit refused is recorded and judged not at all: "not now" says nothing of the
// connection.
import { setTimeout as sleep } from 'node:timers/promises';
import { delivery, type Delivery } from './alerts.js';
import { AUTO_SERVER, type MonitorCheck, type MonitorConfig } from './monitor-config.js';
import { runInStages, type RunContext } from './run-stages.js';
import { nextRun, plan, type Planned } from './schedule.js';
import { historyFaultExit, loadMonitorConfig, log, openHistory } from './setup.js';
import type { Store } from './store.js';
import { startLocalServer, type LocalServer } from './local-server.js';
import { checkKey, monitorMetrics, type MonitorMetrics } from './monitor-metrics.js';
import { gatesOf } from './gates/gates-of.js';
import { startOutlets, type Outlets } from './outlets/outlet.js';
import { outletsOf } from './outlets/outlets-of.js';

/** What a check's loop needs from the command. */
interface LoopContext extends RunContext {
  /** Ends the wait for the next run: a reload or the end. A run under way finishes first. */
  reload: AbortSignal;
  /** Each check's plan against each server, kept across reloads (planKey): a reload moves no slot. */
  plans: Map<string, Planned>;
}

/** What a plan is kept under: a check whose name, server, schedule and spread are unchanged by a reload keeps its slots and offset. */
const planKey = (check: MonitorCheck, server: string): string => JSON.stringify([check.name, server, check.schedule, check.spreadMs]);

/** A jump of the wall clock against the monotonic one larger than this is said in the log. */
const CLOCK_JUMP_MS = 60_000;
/** The longest single wait: a clock set, or a machine woken, is noticed within this. */
const WAIT_STEP_MS = 10_000;

/** Waits until `at` in steps of at most WAIT_STEP_MS against the wall clock, saying a jump of the clock; ends early on a reload or the end. */
async function waitUntil(ctx: LoopContext, at: number, planned: Planned, about: string): Promise<void> {
  // A clock set forward or back, or a machine that slept, is followed, and a slept-through run happens once on waking.
  while (!ctx.reload.aborted && !ctx.stop.aborted && Date.now() < at) {
    const wall = Date.now();
    const mono = performance.now();
    await sleep(Math.min(at - wall, WAIT_STEP_MS), undefined, { signal: ctx.reload }).catch(() => undefined);
    const jump = Date.now() - wall - (performance.now() - mono);
    if (Math.abs(jump) > CLOCK_JUMP_MS) log(`the clock moved ${jump > 0 ? 'forward' : 'back'} by ${String(Math.round(Math.abs(jump) / 1000))} s (set, or the machine slept): ${about} runs next at ${new Date(nextRun(planned, Date.now())).toISOString()}`);
  }
}

/** Runs one check against one server on its schedule until a reload or the end. */
async function loop(ctx: LoopContext, check: MonitorCheck, server: string, serverTurn: (work: () => Promise<void>) => Promise<void>): Promise<void> {
  const key = planKey(check, server);
  const planned = ctx.plans.get(key) ?? plan(check.schedule, check.spreadMs, Date.now());
  ctx.plans.set(key, planned);
  // Read afresh each time: the signals change while this loop awaits (the stop aborts the reload too).
  const ended = () => ctx.reload.aborted || ctx.stop.aborted;
  while (!ended()) {
    const at = nextRun(planned, Date.now());
    ctx.metrics.scheduled(check.name, server, at);
    await waitUntil(ctx, at, planned, `${check.name} on ${server}`);
    if (ended()) return;
    await serverTurn(() => runInStages(ctx, check, server));
  }
}

/**
 * The local page and /metrics where `listen` says (none for `listen: off`), or undefined having
 * said why they cannot be served, traced to the setting in `configPath` that chose the address.
 */
async function startListener(listen: MonitorConfig['listen'], configPath: string, sources: Parameters<typeof startLocalServer>[2]): Promise<{ server: LocalServer | undefined; url: string | undefined } | undefined> {
  if (listen === null) return { server: undefined, url: undefined };
  const { host, port } = listen;
  const at = `${host.includes(':') ? `[${host}]` : host}:${String(port)}`;
  try {
    const server = await startLocalServer(host, port, sources);
    return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${String(server.port)}` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? 'is in use' : `cannot be listened on: ${err instanceof Error ? err.message : String(err)}`;
    log(`listen: ${at} ${why} (the \`listen:\` setting in ${configPath})`);
    return undefined;
  }
}

/** The monitor across reloads: what a reload swaps, and what it keeps. */
interface Running {
  configPath: string;
  entry: string;
  config: MonitorConfig;
  store: Store;
  notices: Delivery;
  metrics: MonitorMetrics;
  plans: Map<string, Planned>;
  /** MQTT and InfluxDB, fed from the history; started anew by a reload (their cursors are in the history). */
  outlets: Outlets;
  /** Where the page and /metrics are served, if anywhere. */
  localUrl: string | undefined;
  /** SIGINT or SIGTERM: everything ends, a run under way included. */
  stop: AbortController;
  /** SIGHUP with a valid file: the waits end, and `next` takes over once the runs under way end. */
  reload: AbortController;
  next: MonitorConfig | undefined;
}

/** Takes SIGINT, SIGTERM and SIGHUP for the monitor; the function that gives them back. */
function handleSignals(m: Running): () => void {
  const end = () => {
    m.stop.abort();
  };
  const hup = () => {
    const read = loadMonitorConfig(m.configPath);
    if (read === undefined) {
      log(`the configuration ${m.configPath} was not taken (above); the one running is kept`);
      return;
    }
    m.next = read;
    m.reload.abort();
  };
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  process.on('SIGHUP', hup);
  return () => {
    process.removeListener('SIGINT', end);
    process.removeListener('SIGTERM', end);
    process.removeListener('SIGHUP', hup);
  };
}

/** One run at a time per server: each server's turn waits for the one before. */
function serverTurns(): (server: string) => (work: () => Promise<void>) => Promise<void> {
  const turns = new Map<string, Promise<void>>();
  return (server) => (work) => {
    const run = (turns.get(server) ?? Promise.resolve()).then(work);
    turns.set(server, run.catch(() => undefined));
    return run;
  };
}

/** Every check against every server of the running configuration, until a reload or the end; a history fault thrown. */
async function runConfiguration(m: Running, serverTurn: ReturnType<typeof serverTurns>): Promise<void> {
  const { config } = m;
  log(`${String(config.checks.length)} check${config.checks.length === 1 ? '' : 's'} against ${config.servers.join(', ')}; history in ${config.database}${m.localUrl === undefined ? '' : `; page on ${m.localUrl}/, metrics on ${m.localUrl}/metrics`}`);
  m.store.prune(Date.now() - config.keepMs);
  const listFrom = config.servers.find((s) => s !== AUTO_SERVER);
  const gates = gatesOf({ store: () => m.store, config: () => m.config, log });
  const recorded = () => {
    m.outlets.wake();
  };
  const ctx: LoopContext = { entry: m.entry, store: m.store, notices: m.notices, keepMs: config.keepMs, reload: m.reload.signal, stop: m.stop.signal, metrics: m.metrics, plans: m.plans, listFrom, gates, recorded };
  const reload = m.reload;
  const stopOnReload = () => {
    reload.abort();
  };
  m.stop.signal.addEventListener('abort', stopOnReload);
  // A loop that fails (the history cannot be written) ends the others before the monitor exits:
  // none may go on writing to a history being closed, nor keep the process alive.
  const loops = config.checks.flatMap((check) =>
    config.servers.map((server) =>
      loop(ctx, check, server, serverTurn(server)).catch((err: unknown) => {
        m.stop.abort();
        throw err;
      }),
    ),
  );
  const failure = (await Promise.allSettled(loops)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  m.stop.signal.removeEventListener('abort', stopOnReload);
}

/** The configuration a reload read takes over: its history, its targets, its checks' plans; the old one stays when its history cannot be opened. */
async function takeOver(m: Running, taken: MonitorConfig): Promise<void> {
  const current = m.config;
  m.reload = new AbortController();
  const reopened = taken.database === current.database ? m.store : await openHistory(taken.database);
  if (reopened === undefined) {
    log(`the new configuration's history could not be opened; the one running is kept`);
    return;
  }
  // Deliveries under way end (what is not delivered stays in the outbox) and the new targets take the outbox up.
  await m.notices.stop(undefined, 'by the configuration read again');
  // Stopped before the history may be swapped: each loop reads its cursor from the history it started on.
  await m.outlets.stop();
  if (reopened !== m.store) {
    m.store.close();
    m.store = reopened;
  }
  m.notices = delivery(taken.notify, log, { outbox: m.store });
  m.notices.resume();
  m.outlets = startOutlets(outletsOf(taken, log), () => m.store, log);
  if (JSON.stringify(taken.listen) !== JSON.stringify(current.listen)) log('listen changed: the page and metrics move at the next start, not on a reload');
  m.config = taken;
  m.metrics.retain(new Set(taken.checks.flatMap((c) => taken.servers.map((server) => checkKey(c.name, server)))));
  // A check the new configuration drops or changes gives up its plan; one it keeps keeps it.
  const keptPlans = new Set(taken.checks.flatMap((c) => taken.servers.map((server) => planKey(c, server))));
  for (const k of [...m.plans.keys()]) if (!keptPlans.has(k)) m.plans.delete(k);
  log(`the configuration ${m.configPath} is read again`);
}

/** Runs configuration after configuration (each reload's) until the end; a history fault thrown. */
async function runUntilStopped(m: Running): Promise<void> {
  const serverTurn = serverTurns();
  // A notice kept when the monitor last stopped goes out now, once.
  m.notices.resume();
  for (;;) {
    await runConfiguration(m, serverTurn);
    const taken = m.next;
    if (m.stop.signal.aborted || taken === undefined) return;
    m.next = undefined;
    await takeOver(m, taken);
  }
}

/**
 * `netdiag monitor`: until SIGINT or SIGTERM. SIGHUP reads the configuration again: a valid one
 * takes over once the runs under way end, an invalid one is said and the running one kept. Exit 2
 * for a configuration at fault at start, 1 for a history that cannot be opened or written.
 */
export async function monitorCommand(configPath: string, entry: string): Promise<number> {
  const config = loadMonitorConfig(configPath);
  if (config === undefined) return 2;
  const store = await openHistory(config.database);
  if (store === undefined) return 1;
  const metrics = monitorMetrics();
  const m: Running = { configPath, entry, config, store, notices: delivery(config.notify, log, { outbox: store }), metrics, plans: new Map(), outlets: startOutlets([], () => store, log), localUrl: undefined, stop: new AbortController(), reload: new AbortController(), next: undefined };
  // Read through getters: a reload swaps the configuration and may swap the history.
  const listening = await startListener(config.listen, configPath, { store: () => m.store, config: () => m.config, metrics });
  if (listening === undefined) {
    store.close();
    return 1;
  }
  m.localUrl = listening.url;
  m.outlets = startOutlets(outletsOf(config, log), () => m.store, log);
  const giveSignalsBack = handleSignals(m);
  try {
    await runUntilStopped(m);
    return 0;
  } catch (err) {
    return historyFaultExit(err);
  } finally {
    giveSignalsBack();
    // Bounded: a notice not delivered by now is kept in the outbox for the next start.
    await m.notices.stop();
    await m.outlets.stop();
    await listening.server?.close();
    m.store.close();
  }
}
