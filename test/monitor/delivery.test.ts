// How `netdiag monitor` delivers a notice (docs/monitor.md, "Alerts"): to an Apprise API server through Debian's
// `apprise` command (an `apprise://host/token` URL), to an ntfy topic, and to a plain JSON webhook,
// each to a local receiver; a target that fails is retried with backoff, each failure logged with
// the target's scheme and host only (its URL may carry a token), and given up after the last try;
// one target failing never holds up another.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertNotice, delivery, recoveryNotice } from '../../src/cli/monitor/alerts.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('monitor notices through apprise', ['apprise'], 'apprise');

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

describe.skipIf(!ready)("the monitor's notices", () => {
  let receiver: Server;
  let base: string;
  const received: Received[] = [];
  /** Answers for /flaky, in order (then 200). */
  const flaky: number[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body, at: performance.now() });
        const status = (req.url ?? '').startsWith('/flaky') ? (flaky.shift() ?? 200) : req.url === '/down' ? 503 : 200;
        res.writeHead(status, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    base = `127.0.0.1:${String((receiver.address() as { port: number }).port)}`;
  });
  afterAll(() => {
    receiver.close();
  });

  const at = Date.UTC(2026, 4, 1, 12, 0, 0);
  const notice = alertNotice('line speed', 'https://netdiag.example', 3, [0, 1, 2].map((i) => ({ startedAt: at + i * 60_000, missed: [`download_mbps 12.${String(i)} (expected >= 70% of 500)`] })));
  const recovery = recoveryNotice('line speed', 'https://netdiag.example', 'download_mbps 400');

  it('reaches an Apprise API server through the apprise command, an ntfy topic and a JSON webhook', async () => {
    received.length = 0;
    const lines: string[] = [];
    const sent = delivery([`apprise://${base}/secret-token`, `ntfy://${base}/netdiag-topic`, `http://${base}/hook`], (l) => lines.push(l), { backoffMs: [] });
    sent.send(notice);
    await sent.settled();
    expect(lines).toEqual([]);
    const at = (url: string) => received.find((r) => r.url === url);
    // Apprise's API plugin posts the title, body and notification type as JSON to /notify/<token>:
    // an alert is a failure, so a chat shows it apart from a recovery.
    expect(JSON.parse(at('/notify/secret-token')?.body ?? '{}')).toMatchObject({ title: notice.title, body: notice.body, type: 'failure' });
    // ntfy takes the body as the message and the title as a header.
    expect(at('/netdiag-topic')).toMatchObject({ body: notice.body, headers: { title: notice.title } });
    expect(JSON.parse(at('/hook')?.body ?? '{}')).toEqual({
      kind: 'alert',
      title: 'netdiag monitor: line speed on https://netdiag.example: 3 breaches in a row',
      body: '- 2026-05-01T12:00:00Z: download_mbps 12.0 (expected >= 70% of 500)\n- 2026-05-01T12:01:00Z: download_mbps 12.1 (expected >= 70% of 500)\n- 2026-05-01T12:02:00Z: download_mbps 12.2 (expected >= 70% of 500)',
      check: 'line speed',
      server: 'https://netdiag.example',
    });
  });

  it('tells Apprise a recovery as a success', async () => {
    received.length = 0;
    const sent = delivery([`apprise://${base}/secret-token`], () => undefined, { backoffMs: [] });
    sent.send(recovery);
    await sent.settled();
    expect(JSON.parse(received[0]?.body ?? '{}')).toMatchObject({ title: 'netdiag monitor: line speed on https://netdiag.example recovered', body: 'The last run met every expectation: download_mbps 400.', type: 'success' });
  });

  it('retries a failing target after each wait, logs each failure without the URL past its host, and gives up after the last; the others are not held up', async () => {
    received.length = 0;
    flaky.push(500, 502);
    const lines: string[] = [];
    const started = performance.now();
    const sent = delivery([`http://user:pass@${base}/flaky?token=abc`, `http://${base}/down`, `http://${base}/hook`], (l) => lines.push(l), { backoffMs: [200, 400] });
    sent.send(notice);
    await sent.settled();
    const flakyTries = received.filter((r) => r.url.startsWith('/flaky'));
    expect(flakyTries).toHaveLength(3);
    // Each try after its wait: 200 ms, then 400 ms.
    expect((flakyTries[1]?.at ?? 0) - (flakyTries[0]?.at ?? 0)).toBeGreaterThanOrEqual(190);
    expect((flakyTries[2]?.at ?? 0) - (flakyTries[1]?.at ?? 0)).toBeGreaterThanOrEqual(390);
    expect(received.filter((r) => r.url === '/down')).toHaveLength(3);
    // The webhook that works was reached first, not after the others' waits.
    expect((received.find((r) => r.url === '/hook')?.at ?? Infinity) - started).toBeLessThan(150);
    const failures = lines.filter((l) => l.startsWith(`the alert for line speed on https://netdiag.example was not delivered to http://${base}/…: `));
    expect(lines.join('\n')).not.toMatch(/token=abc|user:pass|\/flaky|\/down/);
    // Two for the flaky target (then it answered), three for the one that stays down.
    expect(failures).toHaveLength(5);
    expect(lines.filter((l) => l.endsWith('given up after 3 tries'))).toEqual([`the alert for line speed on https://netdiag.example was not delivered to http://${base}/…: answered 503; given up after 3 tries`]);
    // The credentials in the URL went as Basic authentication.
    expect(flakyTries[0]?.headers.authorization).toBe(`Basic ${Buffer.from('user:pass').toString('base64')}`);
  });
});
