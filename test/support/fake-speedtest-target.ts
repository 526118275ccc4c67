// FAKE: a stand-in deployment for the CLI speed test's measurement rules, for what the real
// server never does on demand: answer a round trip after a set delay while reporting that delay
// in Server-Timing (or, under load, not answer within the window at all), send downloads at a set
// pace so the rate is steady, refuse a request halfway through a test, stop sending, hold every
// transfer, or reset a kept-alive connection just as a ping arrives on it (the race a server's
// idle timeout makes, wide on a bloated link). It serves its own configuration (a plan the test
// chooses), /__down, /__up and /v1/events, and records what it was asked and on which connection.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FakeTargetBehaviour {
  /** The plan served as the configuration's `light` and `full` modes. */
  plan: { type: 'latency' | 'download' | 'upload'; packet_count?: number; bytes_per_request?: number; request_count?: number }[];
  /** The configuration's limits.max_bytes_per_request: what each download asks for. Default 20 MB. */
  maxBytesPerRequest?: number;
  /** Delay before an idle ping's answer (an empty download marked idle), and whether Server-Timing reports it. */
  pingDelayMs?: number;
  reportPingDelay?: boolean;
  /** Delay before the answer to a round trip taken under load (`during=download|upload`). */
  loadedPingDelayMs?: number;
  /**
   * Delay before the answer to the first round trip under load of each direction instead (one
   * whose request was lost and sent again, and again, after TCP's retransmission timeouts).
   */
  firstLoadedPingDelayMs?: number;
  /** Each download's body at this many bit/s (else as fast as the connection takes it). */
  downloadBps?: number;
  /** Delay before a download's body or an upload's answer, for transfers of more than 0 bytes. */
  transferDelayMs?: number;
  /** Refuse the Nth transfer request (1-based, 0 bytes excluded; of `path` only, when given) with this status and a problem, and this Retry-After when given. */
  refuse?: { nth: number; status: number; path?: '/__down' | '/__up'; retryAfter?: string };
  /** Send the head of the Nth download and then nothing. */
  stallNth?: number;
  /**
   * Reset the connection (RST), without answering, when an idle ping arrives on a connection
   * that has answered before: `once` the first such ping, `twice` that one and the request after
   * it on any connection.
   */
  resetKeptAlive?: 'once' | 'twice';
}

export interface FakeTarget {
  url: string;
  behaviour: FakeTargetBehaviour;
  /** Path and query of each /__down and /__up request, in order. */
  requests: string[];
  /** The connection (numbered from 1 as they open) each of `requests` came on. */
  connections: number[];
  /** The most transfers (more than 0 bytes) of each path open at once. */
  mostOpen: { '/__down': number; '/__up': number };
  /**
   * The most connections open at once that had carried a round trip (an empty download): a
   * client may open a new one when the server closes an idle one, but never more at once than it keeps.
   */
  mostOpenRoundTripConnections: number;
  /** Each POST /v1/events body. */
  events: { event: string; event_id: string; properties: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** The bytes every download body is made of, written again and again. */
const CHUNK = Buffer.alloc(64 * 1024);
const PACE_TICK_MS = 10;

/**
 * A download's body: `bytes` of zeros, at `bps` when given (what is owed by the clock at each
 * tick, so a late timer catches up and the rate over a second stays the pace), else as fast as
 * the connection drains.
 */
function sendBody(res: ServerResponse, bytes: number, bps: number | undefined): void {
  let left = bytes;
  const write = (most: number) => {
    while (left > 0 && most > 0) {
      const n = Math.min(left, most, CHUNK.length);
      left -= n;
      most -= n;
      if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) break;
    }
    if (left === 0) res.end();
  };
  if (bps === undefined) {
    res.on('drain', () => {
      write(Infinity);
    });
    write(Infinity);
    return;
  }
  const started = performance.now();
  const timer = setInterval(() => {
    const owed = Math.floor(((performance.now() - started) * bps) / 8 / 1000) - (bytes - left);
    write(owed);
    if (left === 0) clearInterval(timer);
  }, PACE_TICK_MS);
  res.on('close', () => {
    clearInterval(timer);
  });
}

export async function startFakeTarget(behaviour: FakeTargetBehaviour): Promise<FakeTarget> {
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const transfers = { all: 0, '/__down': 0, '/__up': 0 };
  const inFlight = { '/__down': 0, '/__up': 0 };
  let resets = 0;
  /** The directions whose first round trip under load has come (firstLoadedPingDelayMs). */
  const firstLoaded = new Set<string>();
  /** Requests answered on each connection, so a reset can pick a kept-alive one. */
  const answered = new WeakMap<Socket, number>();
  const numbers = new WeakMap<Socket, number>();
  let connectionCount = 0;
  const roundTripSockets = new Set<Socket>();
  const target: FakeTarget = {
    url: '',
    behaviour,
    requests: [],
    connections: [],
    mostOpen: { '/__down': 0, '/__up': 0 },
    mostOpenRoundTripConnections: 0,
    events: [],
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    res.on('finish', () => answered.set(req.socket, (answered.get(req.socket) ?? 0) + 1));
    if (!numbers.has(req.socket)) numbers.set(req.socket, ++connectionCount);
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    // A transfer is open from its head's arrival (an upload's body is still coming) to its close.
    if (path === '/__up' || (path === '/__down' && url.searchParams.get('bytes') !== '0')) {
      const p = path;
      inFlight[p]++;
      target.mostOpen[p] = Math.max(target.mostOpen[p], inFlight[p]);
      res.on('close', () => {
        inFlight[p]--;
        open.delete(res);
      });
    }
    // Only the events' bodies are kept; an upload's is counted.
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (c: Buffer) => {
      received += c.length;
      if (path === '/v1/events') chunks.push(c);
    });
    req.on('end', () => {
      const b = target.behaviour;
      if (path === '/v1/speed-test/configuration') {
        const modes = ['light', 'full'].map((id) => ({ id, description: id, measurements: b.plan }));
        const limits = { max_bytes_per_request: b.maxBytesPerRequest ?? 20_000_000 };
        json(res, 200, { data: { limits, modes, analytics: { schema_version: 1, events: ['speed_test_started', 'speed_test_completed', 'speed_test_failed'], event_id: 'random_uuid_per_test', endpoint: '/v1/events' } } });
        return;
      }
      if (path === '/v1/events') {
        target.events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeTarget['events'][number]);
        json(res, 202, { data: { accepted: true } });
        return;
      }
      if (path !== '/__down' && path !== '/__up') {
        json(res, 404, { title: 'Not found' });
        return;
      }
      target.requests.push(`${path}${url.search}`);
      target.connections.push(numbers.get(req.socket) ?? 0);
      const bytes = path === '/__down' ? Number(url.searchParams.get('bytes')) : received;
      if (bytes === 0 && !roundTripSockets.has(req.socket)) {
        roundTripSockets.add(req.socket);
        target.mostOpenRoundTripConnections = Math.max(target.mostOpenRoundTripConnections, roundTripSockets.size);
        req.socket.once('close', () => roundTripSockets.delete(req.socket));
      }
      if (bytes === 0) {
        const during = url.searchParams.get('during') ?? 'idle';
        const keptAlive = (answered.get(req.socket) ?? 0) > 0;
        if (during === 'idle' && b.resetKeptAlive !== undefined && (resets === 0 ? keptAlive : resets === 1 && b.resetKeptAlive === 'twice')) {
          resets++;
          req.socket.resetAndDestroy();
          return;
        }
        const first = during !== 'idle' && !firstLoaded.has(during);
        if (first) firstLoaded.add(during);
        const delay = during === 'idle' ? (b.pingDelayMs ?? 0) : first && b.firstLoadedPingDelayMs !== undefined ? b.firstLoadedPingDelayMs : (b.loadedPingDelayMs ?? 0);
        later(delay, () => {
          res.writeHead(200, { 'Content-Length': '0', ...(b.reportPingDelay === true ? { 'Server-Timing': `cfRequestDuration;dur=${String(delay)}` } : {}) }).end();
        });
        return;
      }
      transfers.all++;
      transfers[path]++;
      if (b.refuse !== undefined && b.refuse.nth === (b.refuse.path === undefined ? transfers.all : b.refuse.path === path ? transfers[path] : -1)) {
        if (b.refuse.retryAfter !== undefined) res.setHeader('Retry-After', b.refuse.retryAfter);
        json(res, b.refuse.status, { title: 'Too many requests', detail: 'the speedtest limit of 600 per minute is used up', status: b.refuse.status });
        return;
      }
      open.add(res);
      if (path === '/__down' && b.stallNth === transfers.all) {
        res.writeHead(200, { 'Content-Length': String(bytes) });
        res.write(Buffer.alloc(1));
        return;
      }
      later(b.transferDelayMs ?? 0, () => {
        if (path === '/__up') {
          res.writeHead(200, { 'Content-Length': '0' }).end();
          return;
        }
        res.writeHead(200, { 'Content-Length': String(bytes) });
        sendBody(res, bytes, b.downloadBps);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target.url = `http://127.0.0.1:${String((server.address() as { port: number }).port)}`;
  return target;
}
