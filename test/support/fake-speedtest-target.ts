// FAKE: a stand-in deployment for the CLI speed test's measurement rules, for what the real
// server never does on demand: answer after a set delay while reporting that delay in
// Server-Timing, make transfers slow enough to end a direction or to load the link, refuse a
// request halfway through a test, stop sending, or reset a kept-alive connection just as a
// request arrives on it (the race a server's idle timeout makes, wide on a bloated link). It serves its own configuration (a plan the
// test chooses), /__down, /__up and /v1/events, and records what it was asked.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FakeTargetBehaviour {
  /** The plan served as the configuration's `light` and `full` modes. */
  plan: { type: 'latency' | 'download' | 'upload'; packet_count?: number; bytes_per_request?: number; request_count?: number }[];
  /** Delay before an empty download's answer (a ping), and whether Server-Timing reports it. */
  pingDelayMs?: number;
  reportPingDelay?: boolean;
  /** Delay before a download's body or an upload's answer, for transfers of more than 0 bytes. */
  transferDelayMs?: number;
  /** Refuse the Nth transfer request (1-based, 0 bytes excluded) with this status and problem. */
  refuse?: { nth: number; status: number };
  /** Send the head of the Nth download and then nothing. */
  stallNth?: number;
  /**
   * Reset the connection (RST), without answering, when a transfer request arrives on a connection
   * that has answered before: `once` the first such request, `twice` that one and the request after
   * it on any connection.
   */
  resetKeptAlive?: 'once' | 'twice';
}

export interface FakeTarget {
  url: string;
  behaviour: FakeTargetBehaviour;
  /** Path and query of each /__down and /__up request, in order. */
  requests: string[];
  /** Each POST /v1/events body. */
  events: { event: string; event_id: string; properties: Record<string, unknown> }[];
  close(): Promise<void>;
}

export async function startFakeTarget(behaviour: FakeTargetBehaviour): Promise<FakeTarget> {
  const open = new Set<ServerResponse>();
  let transfers = 0;
  let resets = 0;
  /** Requests answered on each connection, so a reset can pick a kept-alive one. */
  const answered = new WeakMap<Socket, number>();
  const target: FakeTarget = {
    url: '',
    behaviour,
    requests: [],
    events: [],
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    res.on('finish', () => answered.set(req.socket, (answered.get(req.socket) ?? 0) + 1));
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const b = target.behaviour;
      if (url.pathname === '/v1/speed-test/configuration') {
        const modes = ['light', 'full'].map((id) => ({ id, description: id, measurements: b.plan }));
        json(res, 200, { data: { modes, analytics: { schema_version: 1, events: ['speed_test_started', 'speed_test_completed', 'speed_test_failed'], event_id: 'random_uuid_per_test', endpoint: '/v1/events' } } });
        return;
      }
      if (url.pathname === '/v1/events') {
        target.events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeTarget['events'][number]);
        json(res, 202, { data: { accepted: true } });
        return;
      }
      if (url.pathname !== '/__down' && url.pathname !== '/__up') {
        json(res, 404, { title: 'Not found' });
        return;
      }
      target.requests.push(`${url.pathname}${url.search}`);
      const bytes = url.pathname === '/__down' ? Number(url.searchParams.get('bytes')) : Buffer.concat(chunks).length;
      if (bytes === 0) {
        const delay = b.pingDelayMs ?? 0;
        setTimeout(() => {
          res.writeHead(200, { 'Content-Length': '0', ...(b.reportPingDelay === true ? { 'Server-Timing': `cfRequestDuration;dur=${String(delay)}` } : {}) }).end();
        }, delay);
        return;
      }
      transfers++;
      if (b.refuse?.nth === transfers) {
        json(res, b.refuse.status, { title: 'Too many requests', detail: 'the speedtest limit of 600 per minute is used up', status: b.refuse.status });
        return;
      }
      const keptAlive = (answered.get(req.socket) ?? 0) > 0;
      if (b.resetKeptAlive !== undefined && (resets === 0 ? keptAlive : resets === 1 && b.resetKeptAlive === 'twice')) {
        resets++;
        req.socket.resetAndDestroy();
        return;
      }
      if (url.pathname === '/__down' && b.stallNth === transfers) {
        open.add(res);
        res.writeHead(200, { 'Content-Length': String(bytes) });
        res.write(Buffer.alloc(1));
        return;
      }
      setTimeout(() => {
        if (url.pathname === '/__up') res.writeHead(200, { 'Content-Length': '0' }).end();
        else res.writeHead(200, { 'Content-Length': String(bytes) }).end(Buffer.alloc(bytes));
      }, b.transferDelayMs ?? 0);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target.url = `http://127.0.0.1:${String((server.address() as { port: number }).port)}`;
  return target;
}
