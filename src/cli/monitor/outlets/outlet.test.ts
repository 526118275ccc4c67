// The outlet loop over a real history (SQLite in a temporary folder): the outlet here is a
// recording one written for the test, as MQTT's and InfluxDB's own suites have the real peers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type NumberedRun, type RunRecord } from '../store.js';
import { startOutlets, type Outlet } from './outlet.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-outlet-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const run = (startedAt: number): RunRecord => ({ check: 'speed', server: 'http://a', startedAt, durationMs: 1, ok: true, error: null, figures: { download_mbps: 90 }, breaches: [] });

/** An outlet that records what it is given; `refuse` makes it fail until set back, `hang` never answer until closed. */
function recordingOutlet() {
  const got: number[] = [];
  const state = { refuse: false, hang: false, closed: false };
  let abandon: ((err: Error) => void) | undefined;
  const outlet: Outlet = {
    name: 'recording',
    deliver: (runs: readonly NumberedRun[]) => {
      if (state.hang) return new Promise<void>((_, reject) => (abandon = reject));
      if (state.refuse) return Promise.reject(new Error('the peer is away'));
      got.push(...runs.map((r) => r.startedAt));
      return Promise.resolve();
    },
    close: () => {
      state.closed = true;
      abandon?.(new Error('closed'));
      return Promise.resolve();
    },
  };
  return { outlet, got, state };
}

async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the outlet loop', () => {
  it('delivers the runs recorded after its first start, in order, and none from before (those are a backfill\'s)', async () => {
    const store = await openStore(join(dir, 'order.db'));
    store.addRun(run(1));
    const { outlet, got } = recordingOutlet();
    const outlets = startOutlets([outlet], () => store, () => undefined);
    for (const at of [2, 3, 4]) {
      store.addRun(run(at));
      outlets.wake();
    }
    await until(() => got.length === 3, 'three runs');
    expect(got).toEqual([2, 3, 4]);
    await outlets.stop();
    store.close();
  });

  it('keeps what it could not deliver and delivers it in order once the peer is back, saying the failure once and the recovery once', async () => {
    const store = await openStore(join(dir, 'retry.db'));
    const { outlet, got, state } = recordingOutlet();
    const lines: string[] = [];
    const outlets = startOutlets([outlet], () => store, (line) => lines.push(line));
    state.refuse = true;
    store.addRun(run(10));
    outlets.wake();
    await until(() => lines.length === 1, 'the failure said');
    store.addRun(run(11));
    outlets.wake();
    // Two tries at least (1 s, then 2 s apart): still said once.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    state.refuse = false;
    await until(() => got.length === 2, 'both runs');
    expect(got).toEqual([10, 11]);
    expect(lines).toEqual(['recording: cannot deliver (the peer is away); the runs are kept in the history and tried again', 'recording: delivering again']);
    await outlets.stop();
    store.close();
  });

  it('goes on across a stop and a start from where it stood, delivering what was recorded while it was stopped', async () => {
    const store = await openStore(join(dir, 'restart.db'));
    const first = recordingOutlet();
    const running = startOutlets([first.outlet], () => store, () => undefined);
    store.addRun(run(20));
    running.wake();
    await until(() => first.got.length === 1, 'the first run');
    await running.stop();
    store.addRun(run(21));
    store.addRun(run(22));
    const second = recordingOutlet();
    const again = startOutlets([second.outlet], () => store, () => undefined);
    await until(() => second.got.length === 2, 'the runs recorded while stopped');
    expect(second.got).toEqual([21, 22]);
    await again.stop();
    store.close();
  });

  it('delivers the runs of a history emptied by pruning, whose numbers start again below its place', async () => {
    const store = await openStore(join(dir, 'emptied.db'));
    const { outlet, got } = recordingOutlet();
    const outlets = startOutlets([outlet], () => store, () => undefined);
    for (const at of [30, 31, 32]) store.addRun(run(at));
    outlets.wake();
    await until(() => got.length === 3, 'three runs');
    store.prune(Number.MAX_SAFE_INTEGER);
    store.addRun(run(40));
    outlets.wake();
    await until(() => got.length === 4, 'the run after the pruning');
    expect(got).toEqual([30, 31, 32, 40]);
    await outlets.stop();
    store.close();
  });

  it('stops while a delivery hangs: the outlet is closed, the loop ends, and the run is kept for the next start', async () => {
    const store = await openStore(join(dir, 'hang.db'));
    const { outlet, state, got } = recordingOutlet();
    const outlets = startOutlets([outlet], () => store, () => undefined);
    state.hang = true;
    store.addRun(run(50));
    outlets.wake();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await outlets.stop();
    expect(state.closed).toBe(true);
    const next = recordingOutlet();
    const again = startOutlets([next.outlet], () => store, () => undefined);
    await until(() => next.got.length === 1, 'the kept run');
    expect([got, next.got]).toEqual([[], [50]]);
    await again.stop();
    store.close();
  });
});
