// The command line's exchanges for the speed test's load (src/common/speedtest/load-transport.ts)
// over node:http rather than fetch: its socket events give the moment a request starts on an open
// connection (Resource Timing's requestStart), so connection set-up never counts as latency, and
// its streams give each chunk as it arrives. The streams keep connections of their own, apart from
// the round trips' (PROBE_CONNECTIONS), as a browser's would: exactly as many as the run has
// streams, so `--streams 1` is one connection a direction. Every connection is made as the
// run's binding says (`--source`, `-4` / `-6`, src/cli/api/source.ts).
import http from 'node:http';
import https from 'node:https';
import { problemBodyText } from '../api/client.js';
import { socketOptions, type Binding } from '../api/source.js';
import { retryAfterSeconds } from '../../common/rate-limit.js';
import { LoadRefused, type LoadTransport, type RoundTripMark, type TimedRoundTrip } from '../../common/speedtest/load-transport.js';
import { bodyTiming, serverProcessingMs, type BodyTiming } from '../../common/speedtest/server-timing.js';
import { PROBES_IN_FLIGHT, STREAMS } from '../../common/speedtest/working.js';
import { SocketMeter } from './socket-meter.js';

/** Why a run stopped, in the analytics schema's terms (the API contract, failure_reason). */
export class SpeedTestFailure extends Error {
  constructor(
    readonly reason: 'engine_error' | 'network_error' | 'cancelled' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

export const cancelled = (): SpeedTestFailure => new SpeedTestFailure('cancelled', 'the test was cancelled');

/** An exchange answered in full: when it started on an open connection, its first byte, and its Server-Timing. */
interface Exchange {
  /** performance.now() when the request started on an open connection. */
  startMs: number;
  /** From that start to the response's first byte. */
  ttfb: number;
  serverTiming: string | undefined;
}

interface Send {
  method: 'GET' | 'POST';
  path: string;
  agent: http.Agent;
  body?: Buffer;
  /** Aborted when the exchange is given up: it then resolves undefined, and that is no failure. */
  stop: AbortSignal;
  /** Each chunk of a successful response's body, as it arrives. */
  onData?: (bytes: number) => void;
}

/** Connections kept alive, at most `maxSockets` of them, each made as `binding` says (Agent takes net.connect's options). */
const agentFor = (secure: boolean, maxSockets: number, binding: Binding) => {
  const options = { keepAlive: true, maxSockets, ...socketOptions(binding) };
  return secure ? new https.Agent(options) : new http.Agent(options);
};

/** How a transport loads: its parallel streams (1..MAX_STREAMS) and how its connections are made. */
export interface TransportOptions {
  streams?: number;
  binding?: Binding;
}

/** The round trips' connections: as many as may be in flight at once. */
const PROBE_CONNECTIONS = PROBES_IN_FLIGHT;

/** A response's Server-Timing as one list (Node gives a repeated header as an array). */
const serverTimingOf = (header: string | string[] | undefined): string | undefined => (Array.isArray(header) ? header.join(', ') : header);

export class HttpLoadTransport implements LoadTransport {
  readonly #base: URL;
  readonly #secure: boolean;
  readonly #request: typeof http.request;
  readonly #idleMs: number;
  readonly #cancel: AbortSignal;
  readonly #probeAgent: http.Agent;
  readonly #streamCount: number;
  readonly #binding: Binding;
  #streamAgent: http.Agent | undefined;
  /** The upload body, allocated once at the largest size a stream may send and cut to each size. */
  #uploadBuffer: Buffer | undefined;
  /** Requests sent, round trips included. */
  requests = 0;
  /** The bytes every connection of the transport carried, each way. */
  readonly meter = new SocketMeter();

  /** `idleMs`: a request that moves no byte for this long fails as `timeout`; `cancel` fails every exchange as `cancelled`. */
  constructor(base: string, idleMs: number, cancel: AbortSignal, options: TransportOptions = {}) {
    this.#base = new URL(base);
    this.#secure = this.#base.protocol === 'https:';
    this.#request = this.#secure ? https.request : http.request;
    this.#idleMs = idleMs;
    this.#cancel = cancel;
    this.#streamCount = options.streams ?? STREAMS;
    this.#binding = options.binding ?? {};
    this.#probeAgent = agentFor(this.#secure, PROBE_CONNECTIONS, this.#binding);
  }

  /** The parallel streams a direction runs (the load loop's `streams`). */
  get streams(): number {
    return this.#streamCount;
  }

  /** The streams' connections, opened afresh for each direction (closeStreams). */
  get #streams(): http.Agent {
    this.#streamAgent ??= agentFor(this.#secure, this.#streamCount, this.#binding);
    return this.#streamAgent;
  }

  /** Closes the streams' connections: a direction's end. */
  closeStreams(): void {
    this.#streamAgent?.destroy();
    this.#streamAgent = undefined;
  }

  /** Closes every connection the transport keeps. */
  close(): void {
    this.closeStreams();
    this.#probeAgent.destroy();
  }

  async download(bytes: number, onBytes: (bytes: number) => void, signal: AbortSignal): Promise<void> {
    await this.#send({ method: 'GET', path: `/__down?bytes=${String(bytes)}`, agent: this.#streams, stop: signal, onData: onBytes });
  }

  /** The speed-test library uploads a string of ASCII zeros: one buffer of the largest size, cut to each upload's. */
  prepareUploads(bytes: number): void {
    if (this.#uploadBuffer === undefined || this.#uploadBuffer.length < bytes) this.#uploadBuffer = Buffer.alloc(bytes, 0x30);
  }

  async upload(bytes: number, signal: AbortSignal): Promise<BodyTiming | undefined> {
    this.prepareUploads(bytes);
    const x = await this.#send({ method: 'POST', path: '/__up', agent: this.#streams, body: this.#uploadBuffer?.subarray(0, bytes), stop: signal });
    return x === undefined ? undefined : bodyTiming(x.serverTiming);
  }

  /** An empty download marked `mark`: time to first byte less the server's own time (the speed-test library's ping). */
  async roundTrip(mark: RoundTripMark, _n: number, signal: AbortSignal): Promise<TimedRoundTrip> {
    const x = await this.#send({ method: 'GET', path: `/__down?bytes=0&during=${mark}`, agent: this.#probeAgent, stop: signal });
    if (x === undefined) throw new SpeedTestFailure('cancelled', 'the round trip was given up');
    return { sentAt: x.startMs, ms: Math.max(0, x.ttfb - (serverProcessingMs(x.serverTiming) ?? 0)) };
  }

  /**
   * One request, settled when its response has ended: with its timing, or undefined when `stop`
   * ended it first. A kept-alive connection the server closes (its idle timeout) just as a
   * request is written on it fails that request with ECONNRESET before any answer; the request is
   * sent once more, as browsers and Node's own documentation do. Nothing was measured by the
   * failed attempt, and the targets keep nothing, so sending again changes no figure.
   */
  #send(s: Send, retried = false): Promise<Exchange | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#cancel.aborted) {
        reject(cancelled());
        return;
      }
      if (s.stop.aborted) {
        resolve(undefined);
        return;
      }
      this.requests++;
      const url = new URL(s.path, this.#base);
      const headers: Record<string, string | number> = { Accept: '*/*' };
      if (s.body !== undefined) Object.assign(headers, { 'Content-Type': 'text/plain', 'Content-Length': s.body.length });
      const req = this.#request(url, { method: s.method, agent: s.agent, headers, signal: s.stop, timeout: this.#idleMs });
      let start = 0;
      let answered = false;
      // A request ends once: a cut response reports on the response alone, an abort on both.
      const failed = (err: Error) => {
        if (err instanceof SpeedTestFailure) reject(err);
        else if (this.#cancel.aborted) reject(cancelled());
        else if (s.stop.aborted) resolve(undefined);
        else {
          const code = (err as NodeJS.ErrnoException).code;
          if (!retried && !answered && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
            resolve(this.#send(s, true));
            return;
          }
          reject(new SpeedTestFailure('network_error', `${s.method} ${url.pathname} failed: ${code ?? err.message}`));
        }
      };
      req.on('socket', (socket) => {
        this.meter.track(socket);
        const mark = () => (start = performance.now());
        // A new connection: its request starts once it is open (and, over TLS, secured).
        if (socket.connecting) socket.once(this.#secure ? 'secureConnect' : 'connect', mark);
        else mark();
      });
      req.on('timeout', () => req.destroy(new SpeedTestFailure('timeout', `no data from ${url.origin} for ${String(this.#idleMs)} ms`)));
      req.on('error', failed);
      req.on('response', (res) => {
        answered = true;
        const first = performance.now();
        const status = res.statusCode ?? 0;
        const refused = status < 200 || status > 299;
        let problem = '';
        res.on('data', (chunk: Buffer) => {
          // A refusal's problem document says why; a few kilobytes of it are plenty.
          if (refused) {
            if (problem.length < 4096) problem += chunk.toString('utf8');
          } else s.onData?.(chunk.length);
        });
        res.on('end', () => {
          if (refused) {
            const words = `${s.method} ${url.pathname} answered ${String(status)}: ${problemBodyText(problem, status)}`;
            reject(status === 429 ? new LoadRefused(words, retryAfterSeconds(res.headers['retry-after'])) : new SpeedTestFailure('engine_error', words));
            return;
          }
          resolve({ startMs: start, ttfb: first - start, serverTiming: serverTimingOf(res.headers['server-timing']) });
        });
        res.on('error', failed);
      });
      req.end(s.body);
    });
  }
}
