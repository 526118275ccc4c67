import http from 'node:http';
import type { Socket } from 'node:net';
import { finished } from 'node:stream';

/**
 * The service's own outgoing HTTP on Node (the events sink's POSTs, the probes' round trips),
 * through Node's `http` module, which the server has loaded anyway, not undici: importing that
 * into a bare Node 22 process takes 5.8 MB more heap in use and 12.8 MB more reserved (its
 * modules and its WebAssembly parser), for a POST now and then and a probe every 15 s (docs/benchmarks.md, "Memory under the mixed load: undici out, mapped large
 * blocks, the DNS cache as JSON"). Node's agent keeps a free socket until just before the
 * timeout the server announces in its Keep-Alive header, and unrefs it, so it never holds the
 * process open.
 */

type HttpModule = Pick<typeof http, 'request' | 'Agent'>;

/**
 * `node:http`, or `node:https` for an https: URL: loaded only when a collector or a probe is
 * named by one, since TLS's modules are memory a plain-HTTP deployment need not hold.
 */
function httpModuleFor(url: URL): HttpModule {
  return url.protocol === 'https:' ? process.getBuiltinModule('node:https') : http;
}

/** A keep-alive agent for `url`'s scheme; `maxSockets: 1` keeps a probe's one connection. */
export function keepAliveAgent(url: URL, options: http.AgentOptions = {}): http.Agent {
  return new (httpModuleFor(url).Agent)({ keepAlive: true, ...options });
}

interface Exchange {
  method: 'GET' | 'POST';
  headers?: Readonly<Record<string, string>>;
  body?: string;
  agent: http.Agent;
  /** Ends the exchange, whichever step it is at; it rejects with the signal's reason (`TimeoutError`). */
  signal: AbortSignal;
  /** Told which socket carries the request, before it is written (a probe counts new ones). */
  onSocket?: (socket: Socket) => void;
}

/**
 * One request and its whole response: resolves with the status once the body is read to its
 * end (so the connection can carry the next request), rejects on a socket error (its `code`
 * kept, `ECONNREFUSED`), a response cut short, or the signal.
 */
export function exchange(url: URL, { method, headers = {}, body, agent, signal, onSocket }: Exchange): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown): void => {
      // The deadline's own reason (a `TimeoutError`), not the AbortError Node wraps it in.
      reject(signal.aborted ? (signal.reason as Error) : (err as Error));
    };
    // The body as bytes once: a string body was flattened to count its length, then put behind
    // the request's head by `http` and flattened again by the socket's writev before encoding:
    // copies of a 125 KB batch in fresh pages (docs/benchmarks.md, "The batch's copies").
    const bytes = body === undefined ? undefined : Buffer.from(body);
    const outgoing = bytes === undefined ? headers : { ...headers, 'content-length': String(bytes.length) };
    const req = httpModuleFor(url).request(url, { method, headers: outgoing, agent, signal }, (res) => {
      // The answer's body is not read, only drained: a probe's is empty, a collector's unused.
      res.resume();
      finished(res, (err) => {
        if (err === undefined || err === null) resolve(res.statusCode ?? 0);
        else fail(err);
      });
    });
    req.once('error', fail);
    if (onSocket !== undefined) req.once('socket', onSocket);
    req.end(bytes);
  });
}
