// What a shaped link carried while one client ran: the router namespace's own interface counters
// (/proc/<pid>/net/dev of a process parked in it), read every 100 ms. The bytes out of the
// router toward the client are what the download got through the shaper, those toward the server
// what the upload got. A tbf peak is what the link may give, not what it gives: on this machine's
// veth pairs a 200 Mbit/s peak moved 150-190 from run to run as the machine was busy, so a
// client's burst is judged against what the link carried in that client's own run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The fastest one-second average each way, Mbit/s. */
export interface Carried {
  downPeakMbps: number;
  upPeakMbps: number;
}

export interface CarriedCount {
  /** Stops counting and gives the fastest second each way. */
  stop(): Carried;
}

const SAMPLE_MS = 100;
const SECOND_MS = 1000;

/** Bytes sent by `device` in the network namespace of `pid`, from its /proc/net/dev line. */
function txBytes(pid: number, device: string): number {
  const line = readFileSync(`/proc/${String(pid)}/net/dev`, 'utf8')
    .split('\n')
    .find((l) => l.trim().startsWith(`${device}:`));
  if (line === undefined) throw new Error(`${device} is not in the namespace of process ${String(pid)}`);
  // "dev: rx_bytes rx_packets ... (8 receive fields) tx_bytes ..."
  const fields = line.split(':')[1]?.trim().split(/\s+/) ?? [];
  return Number(fields[8]);
}

/**
 * The fastest one-second average of a counter sampled at `samples` (ms, bytes): over each sample
 * and the newest one at least a second before it, by their own times, so a late timer changes no
 * rate.
 */
function fastestSecondMbps(samples: readonly (readonly [number, number])[]): number {
  let best = 0;
  let from = 0;
  for (let i = 0; i < samples.length; i++) {
    const [t, bytes] = samples[i] ?? [0, 0];
    while (from + 1 < i && t - (samples[from + 1]?.[0] ?? 0) >= SECOND_MS) from++;
    const [t0, bytes0] = samples[from] ?? [0, 0];
    if (t - t0 >= SECOND_MS) best = Math.max(best, ((bytes - bytes0) * 8) / ((t - t0) / 1000) / 1e6);
  }
  return best;
}

/** Starts counting what the router namespace `router` sends out of `toClient` and `toServer`. */
export function countCarried(router: string, toClient: string, toServer: string): CarriedCount {
  const parked = spawn('ip', ['netns', 'exec', router, 'sleep', 'infinity'], { stdio: 'ignore' });
  const down: [number, number][] = [];
  const up: [number, number][] = [];
  const sample = () => {
    const pid = parked.pid;
    if (pid === undefined) return;
    try {
      const now = performance.now();
      down.push([now, txBytes(pid, toClient)]);
      up.push([now, txBytes(pid, toServer)]);
    } catch {
      // Before `ip netns exec` has moved into the namespace the process's /proc/net/dev is this
      // namespace's, without the router's devices: the next sample is taken from inside.
    }
  };
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      parked.kill('SIGKILL');
      if (down.length < 2) throw new Error('the router namespace was never counted');
      return { downPeakMbps: fastestSecondMbps(down), upPeakMbps: fastestSecondMbps(up) };
    },
  };
}
