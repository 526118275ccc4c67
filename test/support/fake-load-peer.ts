// FAKE: a stand-in for a deployment's /__down and /__up, for what the real server never does on
// demand: send a Server-Timing header that is not well formed, hold a round trip's answer a set
// time (saying so in Server-Timing or not), and hold a transfer open without finishing it. The
// speed test's transport conformance (src/common/speedtest/load-transport.conformance.ts) meets
// it beside a real server. It serves a blank page at any other path so a browser can run a transport on its origin.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What no Server-Timing reader can read whole: durations that are no numbers, entries with no name. */
export const MALFORMED_SERVER_TIMING = 'body;dur=abc, body25;dur=, body50;dur=1.2.3, ;;;, =, cfRequestDuration;dur=-, cfSpeedX;dur';

/** How long a round trip's answer is held, ms. */
export const HELD_ROUND_TRIP_MS = 300;

export interface FakeLoadPeer {
  url: string;
  /** Transfers from now on send their head and first bytes, then nothing more until closed (true), or finish (false). */
  holdTransfers: (on: boolean) => void;
  /** The body bytes of each upload received in full, in order. */
  uploads: number[];
  close(): Promise<void>;
}

/** The first bytes of a held download: enough for a client to see the body has begun. */
const FIRST_BYTES = Buffer.alloc(64 * 1024, 0x30);

function answerRoundTrip(res: ServerResponse, during: string | null): void {
  // Under a direction's mark the hold is said as the server's own time; idle, it is not.
  const said = during === 'idle' ? MALFORMED_SERVER_TIMING : `cfRequestDuration;dur=${String(HELD_ROUND_TRIP_MS)}`;
  setTimeout(() => {
    res.writeHead(200, { 'Content-Length': '0', 'Cache-Control': 'no-store', 'Server-Timing': said }).end();
  }, HELD_ROUND_TRIP_MS);
}

export async function startFakeLoadPeer(): Promise<FakeLoadPeer> {
  let hold = false;
  const uploads: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/__down') {
      const bytes = Number(url.searchParams.get('bytes'));
      if (bytes === 0) answerRoundTrip(res, url.searchParams.get('during'));
      else if (hold) res.writeHead(200, { 'Content-Length': String(bytes), 'Server-Timing': MALFORMED_SERVER_TIMING }).write(FIRST_BYTES);
      else res.writeHead(200, { 'Content-Length': String(bytes), 'Server-Timing': MALFORMED_SERVER_TIMING }).end(Buffer.alloc(bytes, 0x30));
    } else if (url.pathname === '/__up') {
      let received = 0;
      req.on('data', (chunk: Buffer) => (received += chunk.length));
      req.on('end', () => {
        if (hold) return;
        uploads.push(received);
        res.writeHead(200, { 'Content-Length': '0', 'Server-Timing': MALFORMED_SERVER_TIMING }).end();
      });
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>fake load peer</title>');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the fake load peer has no port');
  return {
    url: `http://127.0.0.1:${String(address.port)}`,
    holdTransfers: (on) => (hold = on),
    uploads,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
