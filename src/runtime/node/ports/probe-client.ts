import type { Agent } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { PROBE_PATH, ProbeUnavailable, type LatencyProbes } from '../../../core/ports/probe-client.js';
import type { RegionId } from '../../../common/regions.js';
import type { Logger } from '../../../core/ports/logger.js';
import { exchange, keepAliveAgent } from './http-exchange.js';

export const PROBE_TIMING = {
  /** Whole budget of one measurement, a reconnect included: past it the probe is 503. */
  deadlineMs: 2_000,
  /**
   * An idle warm connection is exercised this often, well inside the probe's keep-alive
   * window (and the idle timeout of any load balancer in between), so it stays open.
   */
  keepWarmMs: 15_000,
  /** While a probe is down it is tried this often, so it is warm again soon after it returns. */
  retryMs: 2_000,
} as const;

/**
 * One region's probe: a single keep-alive HTTP/1.1 connection (Node's HTTP client, an agent of
 * one socket) opened at start-up and kept open. A measurement is one request and its response over that
 * open connection, timed with the monotonic clock; if the connection had to be (re)opened, the
 * set-up is done by an untimed request first, so the figure never includes a handshake
 * (docs/api.md, "Latency probes"). Concurrent measurements share the one in flight: queueing a second
 * request behind the first on the same connection would add the first's time to the second's.
 */
class WarmProbe {
  readonly #agent: Agent;
  readonly #url: URL;
  /** The connection's socket while it is open. */
  #socket: Socket | undefined;
  /** Connections opened so far: a change during a timed request means it paid for set-up. */
  #connects = 0;
  #inflight: Promise<number> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The last outcome, so the log says "reachable" and "unreachable" once per change. */
  #state: 'unknown' | 'up' | 'down' = 'unknown';

  constructor(
    readonly region: RegionId,
    url: URL,
    private readonly logger: Logger,
  ) {
    this.#url = new URL(`${url.pathname.replace(/\/+$/, '')}${PROBE_PATH}`, url.origin);
    // Kept open as long as the probe allows: Node's agent reads the probe's Keep-Alive header
    // (75 s) and closes a free socket just before it.
    this.#agent = keepAliveAgent(url, { maxSockets: 1 });
  }

  /**
   * A socket the agent hands a request: one it has not handed before is a new connection
   * (counted); when it closes the probe is reopened soon, not at the next measurement, so a
   * probe that closed an idle connection, or died and came back, is warm again before anyone asks.
   */
  readonly #onSocket = (socket: Socket): void => {
    if (socket === this.#socket) return;
    this.#socket = socket;
    this.#connects += 1;
    socket.once('close', () => {
      if (this.#socket === socket) this.#socket = undefined;
      this.#schedule(PROBE_TIMING.retryMs);
    });
  };

  /** Opens the connection now and keeps it warm until `close`. */
  start(): void {
    void this.#keepWarm();
  }

  measure(): Promise<number> {
    this.#inflight ??= this.#measure().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#agent.destroy();
  }

  async #measure(): Promise<number> {
    const signal = AbortSignal.timeout(PROBE_TIMING.deadlineMs);
    try {
      // Two tries: a connection the probe closed just before we used it is reopened, untimed.
      for (let attempt = 0; attempt < 2; attempt++) {
        if (this.#socket === undefined) await this.#request(signal);
        const connects = this.#connects;
        const started = performance.now();
        await this.#request(signal);
        const rtt = performance.now() - started;
        if (this.#connects === connects) {
          this.#up();
          return rtt;
        }
      }
      throw Object.assign(new Error('the connection was reopened during each timed request'), { code: 'reconnected' });
    } catch (err) {
      this.#failed(err);
      throw new ProbeUnavailable(`The probe for ${this.region} did not answer.`);
    }
  }

  /** One request over the probe's connection; resolves when the whole response is read. */
  async #request(signal: AbortSignal): Promise<void> {
    const statusCode = await exchange(this.#url, { method: 'GET', agent: this.#agent, signal, onSocket: this.#onSocket });
    if (statusCode !== 204) throw Object.assign(new Error(`the probe answered ${String(statusCode)}`), { code: `status_${String(statusCode)}` });
  }

  /**
   * Exercises the connection when idle and retries a dead probe, so a measurement finds it
   * warm. It goes through `measure` so it is never queued on the connection beside a real one.
   */
  async #keepWarm(): Promise<void> {
    if (this.#closed) return;
    await this.measure().catch(() => undefined);
    this.#schedule(this.#state === 'down' ? PROBE_TIMING.retryMs : PROBE_TIMING.keepWarmMs);
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#keepWarm(), ms);
    // Keeping a probe warm is no reason to keep the process alive.
    this.#timer.unref();
  }

  /** Whether the last exchange with the probe succeeded; undefined before the first. */
  get reachable(): boolean | undefined {
    return this.#state === 'up' ? true : this.#state === 'down' ? false : undefined;
  }

  #up(): void {
    if (this.#state !== 'up') this.logger.info({ region: this.region }, 'probe reachable');
    this.#state = 'up';
  }

  #failed(err: unknown): void {
    if (this.#closed) return;
    if (this.#state !== 'down') {
      // Once per outage, not per request; an error code, never a message (it may name hosts).
      const reason = (err as { code?: unknown }).code;
      this.logger.warn({ region: this.region, reason: typeof reason === 'string' ? reason : 'no_answer' }, 'probe unreachable');
      this.#schedule(PROBE_TIMING.retryMs);
    }
    this.#state = 'down';
  }
}

export interface NodeProbes extends LatencyProbes {
  /** Whether each configured region's probe answered its last exchange (undefined: not yet known). */
  reachable(region: RegionId): boolean | undefined;
  close(): Promise<void>;
}

/** Warm connections to every probe in `NETDIAG_PROBES`, opened at once. */
export function nodeProbes(configured: ReadonlyMap<RegionId, string>, logger: Logger): NodeProbes {
  const probes = new Map<RegionId, WarmProbe>();
  for (const [region, url] of configured) {
    const probe = new WarmProbe(region, new URL(url), logger);
    probes.set(region, probe);
    probe.start();
  }
  return {
    regions: new Set(probes.keys()),
    measure(region) {
      const probe = probes.get(region);
      if (probe === undefined) return Promise.reject(new ProbeUnavailable(`No probe is configured for region ${region}.`));
      return probe.measure();
    },
    reachable: (region) => probes.get(region)?.reachable,
    close() {
      for (const probe of probes.values()) probe.close();
      return Promise.resolve();
    },
  };
}
