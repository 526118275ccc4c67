// `netdiag rpm`'s measurement, by draft-ietf-ippm-responsiveness: for each direction, HTTP/2
// load-generating connections (one more each second until the goodput is stable, at most 16),
// then probes in pairs every PROBE_GAP_MS: one on a new connection (its TCP handshake, TLS
// handshake and the small object's exchange timed apart) and one on a load-generating
// connection (the small object's exchange on a connection whose queue is full), until the
// responsiveness is stable too or the direction's time is up. The rules are in
// src/common/responsiveness/rpm.ts.
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
  PROBE_GAP_MS,
  responsiveness,
  saturated,
  type Confidence,
  type ProbeTimes,
} from '../../common/responsiveness/rpm.js';
import type { LoadDirection } from '../../common/speedtest/load-transport.js';
import type { RpmUrls } from './responsiveness-config.js';
import { pause } from '../../common/settled-within.js';

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
  /** The probes the figure rests on: those of the last MAD intervals. */
  probes: ProbeTimes;
  /** Probes given up after PROBE_DEADLINE_MS without an answer, over the whole direction. */
  lost: number;
  connections: number;
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
/** Probes of each kind waiting for their answers at once; more are not started until some come back. */
const PROBES_OF_A_KIND_IN_FLIGHT = 8;

const TIMING_HEADERS = { 'accept-encoding': 'identity', 'cache-control': 'no-store' };

/** A new TCP and TLS connection to `url`'s host with HTTP/2, its handshakes timed apart, ms (TLS per round trip: one for TLS 1.3, two for 1.2). */
async function openSession(url: URL, deadlineMs: number): Promise<{ session: ClientHttp2Session; tcpMs: number; tlsMs: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port === '' ? 443 : url.port);
  const started = performance.now();
  const tcp: Socket = netConnect({ host, port });
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
    const roundTrips = tls.getProtocol() === 'TLSv1.3' ? 1 : 2;
    const session = h2connect(url.origin, { createConnection: () => tls, settings: { initialWindowSize: STREAM_WINDOW } });
    session.on('error', () => undefined);
    session.setLocalWindowSize(SESSION_WINDOW);
    return { session, tcpMs: connected - started, tlsMs: (secured - connected) / roundTrips };
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

  static async open(urls: RpmUrls, direction: LoadDirection, deadlineMs: number): Promise<LoadConnection> {
    const { session } = await openSession(urls.large, deadlineMs);
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

/**
 * One direction's probes (the draft's responsiveness probes): every PROBE_GAP_MS a foreign probe
 * on a connection of its own (its TCP, TLS and HTTP times) and a self probe on one of the loaded
 * connections, at most PROBES_OF_A_KIND_IN_FLIGHT of each kind at once.
 */
function prober(urls: RpmUrls, connections: readonly LoadConnection[], signal: AbortSignal) {
  const inFlight = { foreign: 0, self: 0 };
  let lost = 0;
  let failure: Error | undefined;
  let running = false;
  let timer: NodeJS.Timeout | undefined;

  const foreignProbe = async (into: ProbeTimes) => {
    inFlight.foreign++;
    try {
      const { session, tcpMs, tlsMs } = await openSession(urls.small, PROBE_DEADLINE_MS);
      try {
        const sent = performance.now();
        const { done } = exchange(session, { ':path': urls.small.pathname + urls.small.search });
        const status = await withDeadline(done, PROBE_DEADLINE_MS);
        if (status === undefined) {
          lost++;
          return;
        }
        checkStatus(status, 'small download');
        into.tcp.push(tcpMs);
        into.tls.push(tlsMs);
        into.http.push(performance.now() - sent);
      } finally {
        session.destroy();
      }
    } finally {
      inFlight.foreign--;
    }
  };
  const selfProbe = async (into: ProbeTimes) => {
    const live = connections.filter((c) => !c.session.destroyed);
    const on = live[Math.floor(Math.random() * live.length)];
    if (on === undefined) return;
    inFlight.self++;
    try {
      const sent = performance.now();
      const { stream, done } = exchange(on.session, { ':path': urls.small.pathname + urls.small.search });
      const status = await withDeadline(done, PROBE_DEADLINE_MS);
      if (status === undefined) {
        stream.close();
        lost++;
        return;
      }
      checkStatus(status, 'small download');
      into.self.push(performance.now() - sent);
    } finally {
      inFlight.self--;
    }
  };
  const pair = (into: ProbeTimes) => {
    const settle = (p: Promise<void>) => {
      p.catch((err: unknown) => {
        // A probe the direction's end cut off is no failure; any other is the run's.
        if (!signal.aborted && running) failure ??= err instanceof Error ? err : new Error(String(err));
      });
    };
    if (inFlight.foreign < PROBES_OF_A_KIND_IN_FLIGHT) settle(foreignProbe(into));
    if (inFlight.self < PROBES_OF_A_KIND_IN_FLIGHT) settle(selfProbe(into));
  };
  return {
    /** Sends a pair now and every PROBE_GAP_MS, each into the interval `current` gives at the time. */
    start(current: () => ProbeTimes): void {
      running = true;
      timer = setInterval(() => {
        pair(current());
      }, PROBE_GAP_MS);
      pair(current());
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

/** Runs one direction to its end: stable goodput and responsiveness, or MAX_DIRECTION_MS. */
export async function runDirection(urls: RpmUrls, direction: LoadDirection, options: { deadlineMs: number; onProgress: (p: RpmProgress) => void; signal: AbortSignal }): Promise<DirectionRpm> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const connections: LoadConnection[] = [];
  /** Each interval's probe times (a probe counts in the interval it started in). */
  const intervals: ProbeTimes[] = [];
  const rates: number[] = [];
  const rpmSeries: number[] = [];
  let goodputStable = false;
  let rpmStable = false;
  let probing = false;
  let probingFrom = 0;
  const current = () => intervals.at(-1) ?? noProbes();
  // The last MAD intervals' probes: read after an interval's sleep, the newest one is whole.
  const lastProbes = () => joinProbes(intervals.slice(-MAD));
  const probes = prober(urls, connections, options.signal);

  try {
    connections.push(await LoadConnection.open(urls, direction, options.deadlineMs));
    let counted = 0;
    let lastMoved = performance.now();
    for (let k = 1; ; k++) {
      intervals.push(noProbes());
      await pause(Math.max(0, started + k * RPM_INTERVAL_MS - performance.now()), options.signal);
      if (options.signal.aborted) throw new RpmFailure('cancelled');
      const failed = connections.find((c) => c.failure !== undefined)?.failure ?? probes.failure();
      if (failed !== undefined) throw failed instanceof RpmFailure ? failed : new RpmFailure(`a connection failed: ${failed.message}`);
      const total = connections.reduce((sum, c) => sum + c.bytes, 0);
      if (total > counted) lastMoved = performance.now();
      else if (performance.now() - lastMoved >= options.deadlineMs) throw new RpmFailure(`nothing moved for ${String(Math.round(options.deadlineMs / 1000))} s: the server stalled`);
      rates.push(((total - counted) * 8 * 1000) / RPM_INTERVAL_MS);
      counted = total;
      goodputStable = saturated(movingAverages(rates));
      if (probing) {
        const rpm = responsiveness(lastProbes());
        if (rpm !== undefined) rpmSeries.push(rpm);
        rpmStable = intervals.length - probingFrom >= MAD && saturated(rpmSeries);
      }
      options.onProgress({ direction, elapsedMs: elapsed(), connections: connections.length, goodputBps: movingAverages(rates).at(-1), rpm: rpmSeries.at(-1) });
      if ((goodputStable && rpmStable) || elapsed() >= MAX_DIRECTION_MS - RPM_INTERVAL_MS / 2) break;
      if (!goodputStable && connections.length < MAX_CONNECTIONS) connections.push(await LoadConnection.open(urls, direction, options.deadlineMs));
      // Probing starts once the goodput is stable, or halfway through the direction's time
      // when it never is (a link whose rate swings still has a responsiveness to measure).
      if (!probing && (goodputStable || elapsed() >= MAX_DIRECTION_MS / 2)) {
        probing = true;
        probingFrom = intervals.length;
        probes.start(current);
      }
    }
  } finally {
    probes.stop();
    for (const c of connections) c.close();
  }
  // The figure: the probes of the last MAD intervals.
  const measured = lastProbes();
  // The goodput while the responsiveness was measured: every interval since probing began (four
  // at least), not only the last four, which on a link whose rate never settles swing with it (a
  // 300 ms queue at 20 Mbit/s read 14.9 over its last four seconds where curl read 18.0).
  const probed = rates.slice(probingFrom);
  const goodput = probed.length >= MAD ? probed.reduce((a, b) => a + b, 0) / probed.length : (movingAverages(rates).at(-1) ?? rates.at(-1) ?? 0);
  return {
    direction,
    goodputBps: goodput,
    rpm: responsiveness(measured),
    rpmP90: responsiveness(measured, p90),
    probes: measured,
    lost: probes.lost(),
    connections: connections.length,
    intervals: intervals.length,
    goodputStable,
    rpmStable,
    confidence: confidenceOf(rpmSeries.length, goodputStable && rpmStable),
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

