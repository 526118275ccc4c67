// The Node listener writes the replies of one event-loop turn together at its end (issue 54: a
// client on the same host is woken once for them). Real IncomingMessage and ServerResponse
// objects, called as node:http calls the listener, so two requests are certainly in one turn.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app/app.js';
import type { HttpReply, HttpRequest } from '../../src/core/http/types.js';
import { nodeListener } from '../../src/runtime/node/adapter/listener.js';
import { memoryLogger } from '../support/services.js';

function exchange(url: string): [IncomingMessage, ServerResponse] {
  const incoming = new IncomingMessage(new Socket());
  incoming.method = 'GET';
  incoming.url = url;
  incoming.headers = { host: 'localhost' };
  incoming.httpVersionMajor = 1;
  incoming.httpVersionMinor = 1;
  return [incoming, new ServerResponse(incoming)];
}

/**
 * A path ending in `/bad` answers with a header value Node refuses to write (a line break:
 * ERR_INVALID_CHAR); `/later…` answers once a promise settles, as a route that waited for a body
 * or a PTR does.
 */
const app = {
  handle: (req: HttpRequest): HttpReply | Promise<HttpReply> => {
    const reply: HttpReply = req.path.endsWith('/bad')
      ? { status: 200, headers: ['X-Broken', 'a\nb'], body: 'no' }
      : { status: 200, headers: ['Content-Type', 'text/plain'], body: `answer for ${req.path}` };
    return req.path.startsWith('/later') ? Promise.resolve(reply) : reply;
  },
} as unknown as App;

/** Ten turns of the microtask queue: a settled promise's handlers and those they queue run; the event loop's turn goes on. */
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('replies written at the end of the turn', () => {
  it('writes every reply of a turn once the turn is over, and one that cannot be written does not stop the rest', async () => {
    const logger = memoryLogger();
    const listener = nodeListener(app, logger, undefined);
    const first = exchange('/first');
    const bad = exchange('/bad');
    const last = exchange('/last');
    for (const [incoming, outgoing] of [first, bad, last]) listener(incoming, outgoing);
    // Nothing is written while the turn is under way (these replies are ready at once).
    expect([first[1].headersSent, last[1].headersSent]).toEqual([false, false]);
    await new Promise((resolve) => setImmediate(resolve));
    expect([first[1].writableEnded, last[1].writableEnded]).toEqual([true, true]);
    expect(bad[1].destroyed).toBe(true);
    expect(logger.entries.map((e) => e.msg)).toEqual(['a reply could not be written']);
  });

  it('holds replies that waited to the end of the turn too, written together once it is over', async () => {
    const listener = nodeListener(app, memoryLogger(), undefined);
    const one = exchange('/later/one');
    const two = exchange('/later/two');
    for (const [incoming, outgoing] of [one, two]) listener(incoming, outgoing);
    // Both promises have settled and their handlers run; the replies are not written yet.
    await drainMicrotasks();
    expect([one[1].headersSent, two[1].headersSent]).toEqual([false, false]);
    await new Promise((resolve) => setImmediate(resolve));
    expect([one[1].writableEnded, two[1].writableEnded]).toEqual([true, true]);
  });

  it('answers the rest of the turn when a reply that waited cannot be written, and logs it', async () => {
    // Written when it settled, such a reply threw inside the promise's handler: a rejection
    // nothing handled, which ends a Node process.
    const logger = memoryLogger();
    const listener = nodeListener(app, logger, undefined);
    const bad = exchange('/later/bad');
    const good = exchange('/later/good');
    for (const [incoming, outgoing] of [bad, good]) listener(incoming, outgoing);
    await drainMicrotasks();
    await new Promise((resolve) => setImmediate(resolve));
    expect(bad[1].destroyed).toBe(true);
    expect(good[1].writableEnded).toBe(true);
    expect(logger.entries.map((e) => e.msg)).toEqual(['a reply could not be written']);
  });
});
