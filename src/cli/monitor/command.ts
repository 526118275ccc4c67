// `netdiag monitor` (docs/monitor.md): the checks of one configuration file on their schedules,
// each run recorded in the history and judged against its expectations, alerts and recoveries
// sent. Runs against one server never overlap (a speed test and a
// responsiveness test at once would each measure the other), nor do a check's own runs. A run the
// server's rate limit refused is recorded and judged not at all: "not now" says nothing of the
// connection.
import { setTimeout as sleep } from 'node:timers/promises';
import { alertQuoted } from './alert-text.js';
import { afterRun, ALERT_RUNS_SHOWN, alertNotice, delivery, recoveryNotice, type Delivery, type MissedRun } from './alerts.js';
import type { MonitorCheck, MonitorConfig } from './monitor-config.js';
import { breaches } from './expect.js';
import { runCheck } from './run-check.js';
import { nextRun, plan, type Planned } from './schedule.js';
import { loadConfig, log, openHistory, summary } from './setup.js';
import { StoreError, type RunRecord, type Store } from './store.js';
import { startLocalServer, type LocalServer } from './local-server.js';
import { checkKey, monitorMetrics, type MonitorMetrics } from './monitor-metrics.js';

/** What a check's loop needs from the command. */
interface LoopContext {
  entry: string;
  store: Store;
  notices: Delivery;
  keepMs: number;
  /** Ends the wait for the next run: a reload or the end. A run under way finishes first. */
  reload: AbortSignal;
  /** Ends everything, a run under way included. */
  stop: AbortSignal;
  metrics: MonitorMetrics;
  /** Each check's plan against each server, kept across reloads (planKey): a reload moves no slot. */
  plans: Map<string, Planned>;
}

/** What a plan is kept under: a check whose name, server, schedule and spread are unchanged by a reload keeps its slots and offset. */
const planKey = (check: MonitorCheck, server: string): string => JSON.stringify([check.name, server, check.schedule, check.spreadMs]);

/** The runs of the streak an alert recounts, with what each missed in the alert's words (the server's made inert). */
function missedRuns(store: Store, check: MonitorCheck, server: string, streak: number, known: Record<string, unknown> | undefined): MissedRun[] {
  return store.judgedRuns(check.name, server, Math.min(streak, ALERT_RUNS_SHOWN)).map((run) => {
    if (!run.ok) return { startedAt: run.startedAt, missed: [`the check did not run: ${alertQuoted(run.error ?? '')}`] };
    const told = breaches(check.expect, run.figures, known, alertQuoted);
    // Judged by expectations a reload has since changed: its own words, made inert.
    return { startedAt: run.startedAt, missed: told.length > 0 ? told : run.breaches.map(alertQuoted) };
  });
}

/** A jump of the wall clock against the monotonic one larger than this is said in the log. */
const CLOCK_JUMP_MS = 60_000;
/** The longest single wait: a clock set, or a machine woken, is noticed within this. */
const WAIT_STEP_MS = 10_000;

/** Runs one check against one server on its schedule until a reload or the end. */
async function loop(ctx: LoopContext, check: MonitorCheck, server: string, serverTurn: (work: () => Promise<void>) => Promise<void>): Promise<void> {
  const { store, notices, reload, stop } = ctx;
  const key = planKey(check, server);
  const planned = ctx.plans.get(key) ?? plan(check.schedule, check.spreadMs, Date.now());
  ctx.plans.set(key, planned);
  // Read afresh each time: the signals change while this loop awaits.
  const ended = () => reload.aborted || stop.aborted;
  while (!ended()) {
    const at = nextRun(planned, Date.now());
    ctx.metrics.scheduled(check.name, server, at);
    // Waited in steps of at most WAIT_STEP_MS against the wall clock: a clock set forward or back,
    // or a machine that slept, is followed, and a slept-through run happens once on waking.
    while (!ended() && Date.now() < at) {
      const wall = Date.now();
      const mono = performance.now();
      await sleep(Math.min(at - wall, WAIT_STEP_MS), undefined, { signal: reload }).catch(() => undefined);
      const jump = Date.now() - wall - (performance.now() - mono);
      if (Math.abs(jump) > CLOCK_JUMP_MS) log(`the clock moved ${jump > 0 ? 'forward' : 'back'} by ${String(Math.round(Math.abs(jump) / 1000))} s (set, or the machine slept): ${check.name} on ${server} runs next at ${new Date(nextRun(planned, Date.now())).toISOString()}`);
    }
    if (ended()) return;
    await serverTurn(async () => {
      const startedAt = Date.now();
      const outcome = await runCheck(ctx.entry, check, server, stop);
      if (stop.aborted) return;
      const known = store.lastMet(check.name, server);
      if (outcome.limited) {
        // Recorded and shown, but neither a breach nor a met run: the streak and the alert stand.
        const record: RunRecord = { check: check.name, server, startedAt, durationMs: outcome.durationMs, ok: false, limited: true, error: outcome.error, figures: {}, breaches: [] };
        store.addRun(record);
        ctx.metrics.observe(record, store.alertState(check.name, server));
        log(`${check.name} on ${server}: ${summary(record)}; counted in no streak`);
        return;
      }
      // A run that did not run missed everything at once: its reason is said once, in `error`.
      const missed = outcome.ok ? breaches(check.expect, outcome.figures, known) : ['the check did not run'];
      const record: RunRecord = { check: check.name, server, startedAt, durationMs: outcome.durationMs, ok: outcome.ok, error: outcome.error, figures: outcome.figures, breaches: missed };
      store.addRun(record);
      const { state, send } = afterRun(store.alertState(check.name, server), missed.length > 0, check.alertAfter);
      store.setAlertState(check.name, server, state);
      ctx.metrics.observe(record, state);
      store.prune(Date.now() - ctx.keepMs);
      const streakText = missed.length === 0 ? '' : `; breach ${String(state.streak)} in a row${outcome.ok ? `: ${missed.join('; ')}` : ''}`;
      log(`${check.name} on ${server}: ${summary(record)}${streakText}`);
      if (send === 'alert') notices.send(alertNotice(check.name, server, state.streak, missedRuns(store, check, server, state.streak, known)));
      if (send === 'recovery') notices.send(recoveryNotice(check.name, server, summary(record, alertQuoted)));
    });
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

/**
 * `netdiag monitor`: until SIGINT or SIGTERM. SIGHUP reads the configuration again: a valid one
 * takes over once the runs under way end, an invalid one is said and the running one kept. Exit 2
 * for a configuration at fault at start, 1 for a history that cannot be opened or written.
 */
export async function monitorCommand(configPath: string, entry: string): Promise<number> {
  const first = loadConfig(configPath);
  if (first === undefined) return 2;
  const opened = await openHistory(first.database);
  if (opened === undefined) return 1;
  let config: MonitorConfig = first;
  let store: Store = opened;
  const metrics = monitorMetrics();
  // Read through getters: a reload swaps the configuration and may swap the history.
  const listening = await startListener(config.listen, configPath, { store: () => store, config: () => config, metrics });
  if (listening === undefined) {
    store.close();
    return 1;
  }
  const { server: local, url: localUrl } = listening;
  const stop = new AbortController();
  const end = () => {
    stop.abort();
  };
  let reload = new AbortController();
  let next: MonitorConfig | undefined;
  const hup = () => {
    const read = loadConfig(configPath);
    if (read === undefined) {
      log(`the configuration ${configPath} was not taken (above); the one running is kept`);
      return;
    }
    next = read;
    reload.abort();
  };
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  process.on('SIGHUP', hup);
  // One run at a time per server: each server's turn waits for the one before.
  const turns = new Map<string, Promise<void>>();
  const serverTurn = (server: string) => (work: () => Promise<void>) => {
    const run = (turns.get(server) ?? Promise.resolve()).then(work);
    turns.set(server, run.catch(() => undefined));
    return run;
  };
  let notices = delivery(config.notify, log, { outbox: store });
  const plans = new Map<string, Planned>();
  try {
    // A notice kept when the monitor last stopped goes out now, once.
    notices.resume();
    for (;;) {
      const current: MonitorConfig = config;
      log(`${String(current.checks.length)} check${current.checks.length === 1 ? '' : 's'} against ${current.servers.join(', ')}; history in ${current.database}${localUrl === undefined ? '' : `; page on ${localUrl}/, metrics on ${localUrl}/metrics`}`);
      store.prune(Date.now() - current.keepMs);
      const ctx: LoopContext = { entry, store, notices, keepMs: current.keepMs, reload: reload.signal, stop: stop.signal, metrics, plans };
      const stopOnReload = () => {
        reload.abort();
      };
      stop.signal.addEventListener('abort', stopOnReload);
      // A loop that fails (the history cannot be written) ends the others before the monitor exits:
      // none may go on writing to a history being closed, nor keep the process alive.
      const loops = current.checks.flatMap((check) =>
        current.servers.map((server) =>
          loop(ctx, check, server, serverTurn(server)).catch((err: unknown) => {
            stop.abort();
            throw err;
          }),
        ),
      );
      const failure = (await Promise.allSettled(loops)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
      stop.signal.removeEventListener('abort', stopOnReload);
      if (stop.signal.aborted || next === undefined) break;
      const taken: MonitorConfig = next;
      next = undefined;
      reload = new AbortController();
      const reopened = taken.database === current.database ? store : await openHistory(taken.database);
      if (reopened === undefined) {
        log(`the new configuration's history could not be opened; the one running is kept`);
        continue;
      }
      // Deliveries under way end (what is not delivered stays in the outbox) and the new targets take the outbox up.
      await notices.stop(undefined, 'by the configuration read again');
      if (reopened !== store) {
        store.close();
        store = reopened;
      }
      notices = delivery(taken.notify, log, { outbox: store });
      notices.resume();
      if (JSON.stringify(taken.listen) !== JSON.stringify(current.listen)) log('listen changed: the page and metrics move at the next start, not on a reload');
      config = taken;
      metrics.retain(new Set(taken.checks.flatMap((c) => taken.servers.map((server) => checkKey(c.name, server)))));
      // A check the new configuration drops or changes gives up its plan; one it keeps keeps it.
      const keptPlans = new Set(taken.checks.flatMap((c) => taken.servers.map((server) => planKey(c, server))));
      for (const k of [...plans.keys()]) if (!keptPlans.has(k)) plans.delete(k);
      log(`the configuration ${configPath} is read again`);
    }
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    log(err.message);
    return 1;
  } finally {
    process.removeListener('SIGINT', end);
    process.removeListener('SIGTERM', end);
    process.removeListener('SIGHUP', hup);
    // Bounded: a notice not delivered by now is kept in the outbox for the next start.
    await notices.stop();
    await local?.close();
    store.close();
  }
  return 0;
}
