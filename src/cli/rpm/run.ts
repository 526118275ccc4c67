// `netdiag rpm`'s measurement, by draft-ietf-ippm-responsiveness and the way its authors' client
// (goresponsiveness) takes it: for each direction, HTTP/2 load-generating connections (one more
// each second, at most 16); once the goodput is stable, a probe round every ROUND_GAP_MS: a probe
// on a new connection (its TCP handshake, TLS handshake and the small object's exchange, timed
// whole and apart), then one on a random load-generating connection (the small object's exchange
// behind that connection's queue); until the responsiveness is stable too or the direction's
// time is up. The rules are in src/common/responsiveness/rpm.ts.
import { connect as h2connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import {
  confidenceOf,
  RPM_INTERVAL_MS,
  joinProbes,
  MAD,
  MAX_CONNECTIONS,
  MAX_DIRECTION_MS,
  movingAverages,
  noProbes,
  p90,
  probeComponents,
  ROUND_GAP_MS,
  responsiveness,
  saturated,
  type Confidence,
  type ProbeComponents,
  type ProbeTimes,
} from '../../common/responsiveness/rpm.js';
import type { LoadDirection } from '../../common/speedtest/load-transport.js';
import type { RpmUrls } from './responsiveness-config.js';
import { pause } from '../../common/settled-within.js';
import { socketOptions, type Binding } from '../api/source.js';
import { SocketMeter } from '../speedtest/socket-meter.js';

/** A run that cannot go on: the message says why (exit 1; exit 4 when the server's rate limit refused it, src/cli/api/rate-limit.ts). */
export class RpmFailure extends Error {
  constructor(
    message: string,
    readonly limited = false,
  ) {
    super(message);
  }
}

/** What a direction measured. */
export interface DirectionRpm {
  direction: LoadDirection;
  /** Goodput over the intervals probed (the last MAD moving average when fewer), bit/s. */
  goodputBps: number;
  rpm: number | undefined;
  rpmP90: number | undefined;
  /** The probes the figure rests on: those of the last MAD intervals once stable, else all of them. */
  probes: ProbeTimes;
  /** Each probe kind's trimmed mean over those probes. */
  components: ProbeComponents;
  /** Probe rounds given up, over the whole direction: a probe with no answer within PROBE_DEADLINE_MS, or a new connection that could not be made. */
  lost: number;
  connections: number;
  /** Load-generating connections after the first that could not be opened (their handshake lost to the load), tried again. */
  failedConnections: number;
  intervals: number;
  goodputStable: boolean;
  rpmStable: boolean;
  confidence: Confidence;
  durationMs: number;
}

/** Where the run is, for a progress line. */
export interface RpmProgress {
  direction: LoadDirection;
  elapsedMs: number;
  connections: number;
  goodputBps: number | undefined;
  rpm: number | undefined;
}

/** The client's HTTP/2 receive windows: large, so a download is held by the link, not by flow control (RFC 9113 §6.9). */
const STREAM_WINDOW = 8 * 1024 * 1024;
const SESSION_WINDOW = 32 * 1024 * 1024;
/** One upload write: a whole number of full TLS records. */
const UPLOAD_CHUNK = Buffer.alloc(64 * 1024, 0x30);
/** A probe with no answer in this long is given up and counted as lost (`lost` in the result), not timed. */
const PROBE_DEADLINE_MS = 10_000;
/** Probe rounds waiting for their answers at once; more are not started until some come back (a 300 ms queue holds a round over a second). */
const ROUNDS_IN_FLIGHT = 64;

const TIMING_HEADERS = { 'accept-encoding': 'identity', 'cache-control': 'no-store' };

/** A new TCP and TLS connection to `url`'s host with HTTP/2, made as `binding` says (`--source`), its handshakes timed apart, ms, and when it began (performance.now()). */
async function openSession(url: URL, deadlineMs: number, binding: Binding, meter: SocketMeter): Promise<{ session: ClientHttp2Session; started: number; tcpMs: number; tlsMs: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port === '' ? 443 : url.port);
  const started = performance.now();
  const tcp: Socket = netConnect({ host, port, ...socketOptions(binding) });
  // The TCP socket beneath TLS: the bytes on the wire, records and handshakes included.
  meter.track(tcp);
  const fail = (err: Error) => new RpmFailure(`could not connect to ${url.host}: ${err.message}`);
  const guard = setTimeout(() => tcp.destroy(new Error(`no connection within ${String(deadlineMs / 1000)} s`)), deadlineMs);
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('connect', resolve);
      tcp.once('error', (err: Error) => {
        reject(fail(err));
      });
    });
    const connected = performance.now();
    // `host` for the certificate's check (an address is checked against its IP names), `servername` for SNI (never an address, RFC 6066 §3).
    const tls: TLSSocket = tlsConnect({ socket: tcp, host, servername: /^[0-9.:]+$/.test(host) ? undefined : host, ALPNProtocols: ['h2'] });
    await new Promise<void>((resolve, reject) => {
      tls.once('secureConnect', resolve);
      tls.once('error', (err: Error) => {
        reject(fail(err));
      });
    });
    const secured = performance.now();
    if (tls.alpnProtocol !== 'h2') {
      tls.destroy();
      throw new RpmFailure(`${url.host} does not offer HTTP/2 (ALPN said ${String(tls.alpnProtocol)}): the test runs its probes on the load's own connections, which needs it`);
    }
    const session = h2connect(url.origin, { createConnection: () => tls, settings: { initialWindowSize: STREAM_WINDOW } });
    session.on('error', () => undefined);
    session.setLocalWindowSize(SESSION_WINDOW);
    return { session, started, tcpMs: connected - started, tlsMs: secured - connected };
  } finally {
    clearTimeout(guard);
  }
}

/** A request on `session`; resolves with the status once the response has ended, and each body chunk's size to `onData`. */
function exchange(session: ClientHttp2Session, headers: Record<string, string>, onData?: (bytes: number) => void): { stream: ClientHttp2Stream; done: Promise<number> } {
  const stream = session.request({ ...TIMING_HEADERS, ...headers }, { endStream: headers[':method'] !== 'POST' });
  const done = new Promise<number>((resolve, reject) => {
    let status = 0;
    stream.on('response', (h: IncomingHttpHeaders) => {
      status = Number(h[':status']);
    });
    stream.on('data', (chunk: Buffer) => onData?.(chunk.length));
    stream.on('end', () => {
      resolve(status);
    });
    stream.on('close', () => {
      resolve(status);
    });
    stream.on('error', reject);
  });
  return { stream, done };
}

/** A refusal from the server is the run's end, with what it said. */
function checkStatus(status: number, what: string): void {
  if (status === 429) throw new RpmFailure(`the server refused the ${what} with 429: its rate limit for the test (rpm) is used up`, true);
  if (status !== 200) throw new RpmFailure(`the server answered the ${what} with ${String(status)}`);
}

/** One load-generating connection: its own TCP and TLS connection and HTTP/2 session, moving bytes one way. */
class LoadConnection {
  bytes = 0;
  failure: Error | undefined;
  private stream: ClientHttp2Stream | undefined;
  private closed = false;

  private constructor(readonly session: ClientHttp2Session) {}

  static async open(urls: RpmUrls, direction: LoadDirection, deadlineMs: number, binding: Binding, meter: SocketMeter): Promise<LoadConnection> {
    const { session } = await openSession(urls.large, deadlineMs, binding, meter);
    const c = new LoadConnection(session);
    if (direction === 'download') c.download(urls.large);
    else c.upload(urls.upload);
    return c;
  }

  private download(url: URL): void {
    const { stream, done } = exchange(this.session, { ':path': url.pathname + url.search }, (n) => (this.bytes += n));
    this.stream = stream;
    stream.on('response', (h: IncomingHttpHeaders) => {
      const status = Number(h[':status']);
      if (status !== 200) this.fail(status === 429 ? new RpmFailure('the server refused a download with 429: its rate limit for the test (rpm) is used up', true) : new RpmFailure(`the server answered the large download with ${String(status)}`));
      else if (h['content-encoding'] !== undefined && h['content-encoding'] !== 'identity') this.fail(new RpmFailure(`the server coded the large download (${h['content-encoding']}): the test needs the bytes as they are`));
    });
    done.catch((err: unknown) => {
      this.fail(err);
    });
  }

  private upload(url: URL): void {
    const { stream, done } = exchange(this.session, { ':method': 'POST', ':path': url.pathname + url.search, 'content-type': 'application/octet-stream' });
    this.stream = stream;
    stream.on('response', (h: IncomingHttpHeaders) => {
      // An answer before the body ended is a refusal (a 413, a 429).
      const status = Number(h[':status']);
      if (!this.closed) this.fail(status === 429 ? new RpmFailure('the server refused an upload with 429: its rate limit for the test (rpm) is used up', true) : new RpmFailure(`the server answered an upload before its end with ${String(status)}`));
    });
    done.catch((err: unknown) => {
      this.fail(err);
    });
    const pump = (): void => {
      while (!this.closed && !stream.destroyed) {
        // Counted as HTTP/2 takes each chunk into the connection (as the draft's clients count).
        const more = stream.write(UPLOAD_CHUNK, (err) => {
          if (err === undefined || err === null) this.bytes += UPLOAD_CHUNK.length;
        });
        if (!more) {
          stream.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }

  private fail(err: unknown): void {
    if (this.closed || this.failure !== undefined) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
    this.session.destroy();
  }
}

/** One interval of probing: the probe times of the rounds that started in it (a round's two probes at the same index), and the rounds still out. */
interface ProbeInterval {
  times: ProbeTimes;
  pending: number;
}

const newInterval = (): ProbeInterval => ({ times: noProbes(), pending: 0 });

/** Whatever a probe threw, as an Error to end the run with. */
const asFailure = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A round whose two probes both answered, into the interval it started in. */
function recordRound(into: ProbeInterval, foreign: { whole: number; tcp: number; tls: number; http: number }, self: number): void {
  into.times.foreign.push(foreign.whole);
  into.times.tcp.push(foreign.tcp);
  into.times.tls.push(foreign.tls);
  into.times.http.push(foreign.http);
  into.times.self.push(self);
}

/**
 * One direction's probe rounds: every ROUND_GAP_MS a probe on a connection of its own, then one
 * on a load-generating connection; a round counts, in the interval it started in, once both
 * answered (as goresponsiveness counts them).
 */
function prober(urls: RpmUrls, connections: readonly LoadConnection[], signal: AbortSignal, binding: Binding, meter: SocketMeter) {
  let inFlight = 0;
  let lost = 0;
  let failure: Error | undefined;
  let running = false;
  let timer: NodeJS.Timeout | undefined;

  /**
   * A new connection's probe: its whole time and its parts, ms; undefined when its connection
   * could not be made (a handshake lost in a full queue, past PROBE_DEADLINE_MS) or no answer came in time.
   */
  const foreignProbe = async (): Promise<{ whole: number; tcp: number; tls: number; http: number } | undefined> => {
    const opened = await openSession(urls.small, PROBE_DEADLINE_MS, binding, meter).catch(() => undefined);
    if (opened === undefined) return undefined;
    const { session, started, tcpMs, tlsMs } = opened;
    try {
      const sent = performance.now();
      const status = await withDeadline(exchange(session, { ':path': urls.small.pathname + urls.small.search }).done, PROBE_DEADLINE_MS);
      if (status === undefined) return undefined;
      checkStatus(status, 'small download');
      const ended = performance.now();
      return { whole: ended - started, tcp: tcpMs, tls: tlsMs, http: ended - sent };
    } finally {
      session.destroy();
    }
  };
  /** A loaded connection's probe, ms; undefined when no connection carries load yet or no answer came in time. */
  const selfProbe = async (): Promise<number | undefined> => {
    const live = connections.filter((c) => !c.session.destroyed && c.bytes > 0);
    const on = live[Math.floor(Math.random() * live.length)];
    if (on === undefined) return undefined;
    const sent = performance.now();
    const { stream, done } = exchange(on.session, { ':path': urls.small.pathname + urls.small.search });
    const status = await withDeadline(done, PROBE_DEADLINE_MS);
    if (status === undefined) {
      stream.close();
      return undefined;
    }
    checkStatus(status, 'small download');
    return performance.now() - sent;
  };
  const round = async (into: ProbeInterval): Promise<void> => {
    const foreign = await foreignProbe();
    if (foreign === undefined) {
      lost++;
      return;
    }
    const self = await selfProbe();
    if (self === undefined) {
      lost++;
      return;
    }
    if (running) recordRound(into, foreign, self);
  };
  const startRound = (into: ProbeInterval): void => {
    if (inFlight >= ROUNDS_IN_FLIGHT) return;
    inFlight++;
    into.pending++;
    round(into)
      .catch((err: unknown) => {
        // A probe the direction's end cut off is no failure; any other is the run's.
        if (!signal.aborted && running) failure ??= asFailure(err);
      })
      .finally(() => {
        inFlight--;
        into.pending--;
      });
  };
  return {
    /** Starts a round now and every ROUND_GAP_MS, each into the interval `current` gives at the time. */
    start(current: () => ProbeInterval): void {
      running = true;
      timer = setInterval(() => {
        startRound(current());
      }, ROUND_GAP_MS);
      startRound(current());
    },
    stop(): void {
      if (timer !== undefined) clearInterval(timer);
      running = false;
    },
    /** Probes that got no answer within PROBE_DEADLINE_MS. */
    lost: () => lost,
    /** The first probe that failed otherwise, if any: the run's failure. */
    failure: () => failure,
  };
}

/**
 * The latest MAD intervals of probing whose rounds have all come back, newest last, or undefined
 * while there are not so many: responsiveness is judged on whole intervals (a round on a 300 ms
 * queue outlasts the interval it started in).
 */
function settledWindow(probing: readonly ProbeInterval[]): ProbeInterval[] | undefined {
  for (let end = probing.length; end >= MAD; end--) {
    const window = probing.slice(end - MAD, end);
    if (window.every((i) => i.pending === 0)) return window;
  }
  return undefined;
}

/** Whether the responsiveness is stable: the mean round time of each of the settled MAD intervals agrees (src/common/responsiveness/rpm.ts saturated). */
function responsivenessStable(probing: readonly ProbeInterval[]): boolean {
  const window = settledWindow(probing);
  if (window === undefined || window.some((i) => i.times.self.length === 0)) return false;
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  // A round is its foreign and its self probe together: the interval's mean round is the sum of both kinds over the rounds.
  return saturated(window.map((i) => (sum(i.times.foreign) + sum(i.times.self)) / i.times.self.length));
}

/** The load-generating connections of a direction: the first opened before anything else, the rest added beside the run. */
function loadPool(urls: RpmUrls, direction: LoadDirection, deadlineMs: number, binding: Binding, meter: SocketMeter) {
  const connections: LoadConnection[] = [];
  let opening = 0;
  let closed = false;
  let failedOpens = 0;
  return {
    connections,
    async first(): Promise<void> {
      connections.push(await LoadConnection.open(urls, direction, deadlineMs, binding, meter));
    },
    /**
     * Opens one more beside the run unless there are MAX_CONNECTIONS. The first connection showed
     * the server reachable, so one that cannot open now lost its handshake to the load: counted,
     * and another is tried the next interval.
     */
    add(): void {
      if (closed || connections.length + opening >= MAX_CONNECTIONS) return;
      opening++;
      LoadConnection.open(urls, direction, deadlineMs, binding, meter)
        .then((c) => {
          if (closed) c.close();
          else connections.push(c);
        })
        .catch(() => {
          failedOpens++;
        })
        .finally(() => opening--);
    },
    failure: (): Error | undefined => connections.find((c) => c.failure !== undefined)?.failure,
    failedOpens: (): number => failedOpens,
    close(): void {
      closed = true;
      for (const c of connections) c.close();
    },
  };
}

/** The goodput while the responsiveness was measured: every interval since probing began (MAD at least), else the last moving average. */
function probedGoodput(rates: readonly number[], probingFrom: number): number {
  // Not only the last MAD intervals: on a link whose rate never settles they swing with it (a
  // 300 ms queue at 20 Mbit/s read 14.9 over its last four seconds where curl read 18.0).
  const probed = rates.slice(probingFrom);
  return probed.length >= MAD ? probed.reduce((a, b) => a + b, 0) / probed.length : (movingAverages(rates).at(-1) ?? rates.at(-1) ?? 0);
}

/** Runs one direction to its end: stable goodput and responsiveness, or MAX_DIRECTION_MS. */
export async function runDirection(urls: RpmUrls, direction: LoadDirection, options: { deadlineMs: number; onProgress: (p: RpmProgress) => void; signal: AbortSignal; binding?: Binding; meter?: SocketMeter }): Promise<DirectionRpm> {
  const binding = options.binding ?? {};
  const meter = options.meter ?? new SocketMeter();
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const pool = loadPool(urls, direction, options.deadlineMs, binding, meter);
  /** The intervals since probing began. */
  const probing: ProbeInterval[] = [];
  const rates: number[] = [];
  let goodputStable = false;
  let rpmStable = false;
  let probingFrom = -1;
  let intervals = 0;
  const probes = prober(urls, pool.connections, options.signal, binding, meter);
  const current = () => probing.at(-1) ?? newInterval();

  try {
    await pool.first();
    let counted = 0;
    let lastMoved = performance.now();
    for (let k = 1; ; k++) {
      intervals = k;
      if (probingFrom >= 0) probing.push(newInterval());
      await pause(Math.max(0, started + k * RPM_INTERVAL_MS - performance.now()), options.signal);
      if (options.signal.aborted) throw new RpmFailure('cancelled');
      const failed = pool.failure() ?? probes.failure();
      if (failed !== undefined) throw failed instanceof RpmFailure ? failed : new RpmFailure(`a connection failed: ${failed.message}`);
      const total = pool.connections.reduce((sum, c) => sum + c.bytes, 0);
      if (total > counted) lastMoved = performance.now();
      else if (performance.now() - lastMoved >= options.deadlineMs) throw new RpmFailure(`nothing moved for ${String(Math.round(options.deadlineMs / 1000))} s: the server stalled`);
      rates.push(((total - counted) * 8 * 1000) / RPM_INTERVAL_MS);
      counted = total;
      goodputStable = saturated(movingAverages(rates));
      if (probingFrom >= 0) rpmStable = responsivenessStable(probing);
      const sofar = responsiveness(joinProbes((settledWindow(probing) ?? probing).map((i) => i.times)));
      options.onProgress({ direction, elapsedMs: elapsed(), connections: pool.connections.length, goodputBps: movingAverages(rates).at(-1), rpm: sofar });
      if ((goodputStable && rpmStable) || elapsed() >= MAX_DIRECTION_MS - RPM_INTERVAL_MS / 2) break;
      pool.add();
      // Probing starts once the goodput is stable, or halfway through the direction's time
      // when it never is (a link whose rate swings still has a responsiveness to measure).
      if (probingFrom < 0 && (goodputStable || elapsed() >= MAX_DIRECTION_MS / 2)) {
        probingFrom = rates.length;
        probing.push(newInterval());
        probes.start(current);
      }
    }
  } finally {
    probes.stop();
    pool.close();
  }
  // The figure: the settled MAD intervals once stable, else every probe of the direction (as goresponsiveness's final figure).
  const measured = joinProbes((rpmStable ? (settledWindow(probing) ?? probing) : probing).map((i) => i.times));
  return {
    direction,
    goodputBps: probingFrom < 0 ? (movingAverages(rates).at(-1) ?? rates.at(-1) ?? 0) : probedGoodput(rates, probingFrom),
    rpm: responsiveness(measured),
    rpmP90: responsiveness(measured, p90),
    probes: measured,
    components: probeComponents(measured),
    lost: probes.lost(),
    connections: pool.connections.length,
    failedConnections: pool.failedOpens(),
    intervals,
    goodputStable,
    rpmStable,
    confidence: confidenceOf(probing.length, goodputStable && rpmStable),
    durationMs: elapsed(),
  };
}

/** Resolves with `p`'s value, or with undefined once `ms` have passed without it. */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        resolve(undefined);
      }, ms);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
}

