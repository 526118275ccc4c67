// The history kept before InfluxDB was configured (docs/monitor.md, "InfluxDB"): the outlet
// writes the runs recorded from its first start on (outlet.ts), so the older ones are written by
// `netdiag monitor influxdb-backfill`, once, or taken as line protocol from
// `netdiag monitor export --influx` to load by hand (`influx -import`, a `curl` to /write).
import { durationMs } from '../monitor-config.js';
import { historyFaultExit, loadDatabase, loadMonitorConfig, log, openHistory } from '../setup.js';
import { StoreError } from '../store.js';
import { INFLUXDB_OUTLET, influxdbOutlet, targetName } from './influxdb.js';
import { pointLines } from './influxdb-line.js';

/** Where the history notes the backfill done: the run it reached, when, and to where. */
const BACKFILLED = 'influxdb.backfilled';
/** Runs read and written at a time: a year of five-minute runs is about 100,000. */
const BATCH = 1_000;

/** `netdiag monitor export --influx`: the runs recorded (of one check, since a time) as line protocol on standard output. */
export async function exportInfluxCommand(configPath: string, options: { check?: string; since?: string }): Promise<number> {
  const database = loadDatabase(configPath);
  if (database === undefined) return 2;
  let since = 0;
  if (options.since !== undefined) {
    const ms = durationMs(options.since);
    if (ms === undefined) {
      log(`--since "${options.since}" is not a duration (90s, 30m, 6h, 7d)`);
      return 2;
    }
    since = Date.now() - ms;
  }
  const store = await openHistory(database);
  if (store === undefined) return 1;
  const runs = store.runs(since).filter((r) => options.check === undefined || r.check === options.check);
  store.close();
  process.stdout.write(pointLines(runs));
  log(`${String(runs.length)} run${runs.length === 1 ? '' : 's'} exported as InfluxDB line protocol (precision ms)`);
  return 0;
}

/**
 * `netdiag monitor influxdb-backfill`: the runs up to where the outlet's cursor stands (for an
 * outlet never started, every run, and the cursor is set there so the outlet goes on from it)
 * written to the configured server once; a second call writes nothing and says so. Runs the outlet
 * has already written are written again as the same points (same measurement, tags and time),
 * which InfluxDB keeps once.
 */
export async function influxdbBackfillCommand(configPath: string): Promise<number> {
  const config = loadMonitorConfig(configPath);
  if (config === undefined) return 2;
  const settings = config.influxdb;
  if (settings === null) {
    log(`${configPath} has no influxdb: section: nothing to write to`);
    return 2;
  }
  const store = await openHistory(config.database);
  if (store === undefined) return 1;
  const outlet = influxdbOutlet(settings, log);
  try {
    const done = store.stateValue(BACKFILLED);
    if (done !== undefined) {
      const was = JSON.parse(done) as { through: number; at: string; target: string };
      log(`the history before the outlet started was written to ${was.target} on ${was.at}: nothing written (each run since is the outlet's)`);
      return 0;
    }
    let through = store.outletCursor(INFLUXDB_OUTLET);
    if (through === undefined) {
      through = store.lastRunId();
      store.setOutletCursor(INFLUXDB_OUTLET, through);
    }
    let written = 0;
    for (let after = 0; ; ) {
      const runs = store.runsAfter(after, BATCH).filter((r) => r.id <= through);
      if (runs.length === 0) break;
      await outlet.deliver(runs);
      written += runs.length;
      after = runs.at(-1)?.id ?? through;
    }
    const target = targetName(settings);
    store.setStateValue(BACKFILLED, JSON.stringify({ through, at: new Date().toISOString(), target }));
    log(`${String(written)} run${written === 1 ? '' : 's'} of the history written to ${target}; the outlet writes each run from here on`);
    return 0;
  } catch (err) {
    if (err instanceof StoreError) return historyFaultExit(err);
    log(`the history was not written to ${targetName(settings)}: ${err instanceof Error ? err.message : String(err)}; run it again once the server takes writes (a run written twice is kept once)`);
    return 1;
  } finally {
    await outlet.close();
    store.close();
  }
}
