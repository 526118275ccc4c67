// A real HTTP receiver for `netdiag monitor`'s JSON webhook (docs/monitor.md, "Alerts"): each
// notice posted to it, parsed, in the order it came.
import { once } from 'node:events';
import { createServer } from 'node:http';

/** A notice as the monitor posts it. */
export interface Notice {
  kind: string;
  title: string;
  body: string;
  check: string;
  server: string;
}

export interface WebhookReceiver {
  /** The URL to give in `notify` (path /hook). */
  url: string;
  /** Every notice received so far. */
  notices: Notice[];
  close(): void;
}

/** Listens on loopback, on `port` when given (a port a monitor was told of before), else any free one. */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const notices: Notice[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      notices.push(JSON.parse(body) as Notice);
      res.end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${String((server.address() as { port: number }).port)}/hook`,
    notices,
    close: () => server.close(),
  };
}
