// One lock, shared by the suites' worker processes, over changes to this host's own network
// interfaces. Chromium watches the host's links and addresses (netlink) and, when one changes,
// fails the requests it has in flight with net::ERR_NETWORK_CHANGED at once. A suite that waits on
// a request on purpose (the page's check of a broken IPv6, which must time out) therefore needs no
// veth to come or go meanwhile; seen as a verdict of "IPv4 only" instead of "IPv6 broken" while
// another suite made a namespace. The helpers that add or delete a host-side interface take the
// lock for that moment; a suite that needs the host quiet holds it for its wait.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK = join(tmpdir(), 'netdiag-test-host-network.lock');
const OWNER = join(LOCK, 'owner');
const POLL_MS = 25;
/** A change waits this long for a quiet period to end; a quiet holder keeps it for seconds. */
const CHANGE_WAIT_MS = 60_000;
/** A lock found with no owner written this long after it was made is left over, not being made. */
const UNOWNED_STALE_MS = 5_000;

type Release = () => void;

/** Takes the lock if free (or left by a process that is gone); returns its release, or null. */
function tryTake(): Release | null {
  try {
    mkdirSync(LOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (!leftOver()) return null;
    rmSync(LOCK, { recursive: true, force: true });
    return tryTake();
  }
  writeFileSync(OWNER, String(process.pid));
  return () => {
    rmSync(LOCK, { recursive: true, force: true });
  };
}

function leftOver(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(OWNER, 'utf8'));
  } catch {
    // Made, and its owner not yet written: a taker between two calls, unless it has been long.
    try {
      return Date.now() - statSync(LOCK).mtimeMs > UNOWNED_STALE_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function holder(): string {
  try {
    return `process ${readFileSync(OWNER, 'utf8')}`;
  } catch {
    return 'a process';
  }
}

/** Runs `change` (adding or deleting host-side interfaces) while no suite needs the host quiet. */
export function changingHostNetwork<T>(change: () => T): T {
  const until = Date.now() + CHANGE_WAIT_MS;
  const slot = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const release = tryTake();
    if (release !== null) {
      try {
        return change();
      } finally {
        release();
      }
    }
    if (Date.now() > until) throw new Error(`the host network lock ${LOCK} was held by ${holder()} for over ${String(CHANGE_WAIT_MS)} ms`);
    // The helpers that change interfaces are synchronous (execFileSync), so this waits in place.
    Atomics.wait(slot, 0, 0, POLL_MS);
  }
}

/** Holds the host's interfaces still until the returned release is called. */
export async function holdHostNetworkQuiet(waitMs = CHANGE_WAIT_MS): Promise<Release> {
  const until = Date.now() + waitMs;
  for (;;) {
    const release = tryTake();
    if (release !== null) return release;
    if (Date.now() > until) throw new Error(`the host network lock ${LOCK} was held by ${holder()} for over ${String(waitMs)} ms`);
    await sleep(POLL_MS);
  }
}
