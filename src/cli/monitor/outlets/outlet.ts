// Where the monitor's runs go beyond its own history (docs/monitor.md, "Outlets"): MQTT for Home
// Assistant, InfluxDB. The history is the queue: each outlet keeps a cursor there (the last run it
// delivered), so a run recorded while the broker or database was down is delivered once it is
// back, in order, and a restart loses nothing. An outlet never holds up the schedule: it reads
// the history on its own loop, woken by each run recorded.
import { setTimeout as sleep } from 'node:timers/promises';
import type { NumberedRun, Store } from '../store.js';

/** A place runs are delivered to. */
export interface Outlet {
  /** Its cursor's name in the history ("mqtt", "influxdb"), and how the log names it. */
  name: string;
  /** Delivers the runs, in order: resolves once every one is taken, rejects with the reason when not (they are tried again). */
  deliver(runs: readonly NumberedRun[]): Promise<void>;
  /** Ends its connections, within a few seconds. */
  close(): Promise<void>;
}

/** The outlets running, fed from the history. */
export interface Outlets {
  /** A run was recorded: deliver it now (an outlet waiting out a failure waits on). */
  wake(): void;
  /** Stops every loop and closes every outlet; what is not delivered stays for the next start. */
  stop(): Promise<void>;
}

/** Runs delivered at a time: a backlog of days goes in batches, none of them large. */
const BATCH = 100;
/** Waits after a failed delivery, ms: doubling from the first to the last, which then repeats. */
const RETRY_FIRST_MS = 1_000;
const RETRY_LAST_MS = 60_000;

/** A wake-up that can be waited for: wait() resolves at the next wake() (or at once when one came since the last wait), or at the abort. */
function wakeup(): { wake: () => void; wait: (signal: AbortSignal) => Promise<void> } {
  let pending = false;
  let release: (() => void) | undefined;
  return {
    wake: () => {
      pending = true;
      release?.();
    },
    wait: async (signal) => {
      if (pending || signal.aborted) {
        pending = false;
        return;
      }
      const done = new Promise<void>((resolve) => (release = resolve));
      const onAbort = () => release?.();
      // Removed after each wait: a listener left per run would pile up on the signal for the monitor's life.
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        await done;
      } finally {
        signal.removeEventListener('abort', onAbort);
        release = undefined;
        pending = false;
      }
    },
  };
}

/**
 * One outlet's loop: from its cursor (for an outlet never started, the last run recorded: it
 * delivers what is recorded from now on; older runs are a backfill's), every run in order.
 */
async function feed(outlet: Outlet, store: () => Store, woken: ReturnType<typeof wakeup>, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  let cursor = store().outletCursor(outlet.name);
  if (cursor === undefined) {
    cursor = store().lastRunId();
    store().setOutletCursor(outlet.name, cursor);
  }
  let retryMs = 0;
  /** Tries that failed in a row: the first is said, and the end of the streak. */
  let failed = 0;
  while (!signal.aborted) {
    const runs = store().runsAfter(cursor, BATCH);
    if (runs.length === 0) {
      // Run ids are SQLite rowids: a history emptied by pruning numbers its next runs from 1 again,
      // below the cursor. Every run it holds then is new to the outlet.
      if (cursor > store().lastRunId()) {
        cursor = 0;
        store().setOutletCursor(outlet.name, cursor);
        continue;
      }
      await woken.wait(signal);
      continue;
    }
    try {
      await outlet.deliver(runs);
    } catch (err) {
      if (failed === 0) log(`${outlet.name}: cannot deliver (${err instanceof Error ? err.message : String(err)}); the runs are kept in the history and tried again`);
      failed++;
      retryMs = Math.min(retryMs === 0 ? RETRY_FIRST_MS : retryMs * 2, RETRY_LAST_MS);
      await sleep(retryMs, undefined, { signal }).catch(() => undefined);
      continue;
    }
    if (failed > 0) log(`${outlet.name}: delivering again`);
    failed = 0;
    retryMs = 0;
    cursor = runs.at(-1)?.id ?? cursor;
    store().setOutletCursor(outlet.name, cursor);
  }
}

/** Starts a loop per outlet over the history `store` gives (read afresh: a reload may swap it). */
export function startOutlets(outlets: readonly Outlet[], store: () => Store, log: (line: string) => void): Outlets {
  const stop = new AbortController();
  const wakeups = outlets.map(() => wakeup());
  const loops = outlets.map((outlet, i) =>
    feed(outlet, store, wakeups[i] ?? wakeup(), stop.signal, log).catch((err: unknown) => {
      // The history refused the cursor: said, and this outlet stops; the monitor's own record stage says the fault too.
      log(`${outlet.name}: stopped: ${err instanceof Error ? err.message : String(err)}`);
    }),
  );
  return {
    wake: () => {
      for (const w of wakeups) w.wake();
    },
    stop: async () => {
      stop.abort();
      // Closed first: a delivery under way then fails at once and its loop ends, its runs kept for the next start.
      await Promise.all(outlets.map((o) => o.close().catch(() => undefined)));
      await Promise.all(loops);
    },
  };
}
