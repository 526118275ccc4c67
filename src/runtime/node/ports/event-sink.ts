import type { Agent } from 'node:http';
import type { BatchPoster } from '../../../engines/events/http-sink.js';
import { exchange, keepAliveAgent } from './http-exchange.js';

/**
 * The events sink's POST on Node, through Node's own HTTP client rather than `fetch`: a
 * keep-alive connection without the Fetch layer (Request, Headers and Response objects, a Web
 * stream for each body), which nearly doubles the CPU of a POST (docs/benchmarks.md, "Distinct
 * callers, DNS transports, memory"); it costs no more than through undici's `request` either.
 * Failures keep their classes: a socket error's code (`ECONNREFUSED`) and the deadline's
 * `TimeoutError`. One agent per collector origin; a process names one collector.
 */
export function nodePoster(): BatchPoster {
  const agents = new Map<string, Agent>();
  return (url, headers, body, timeoutMs) => {
    const target = new URL(url);
    let agent = agents.get(target.origin);
    if (agent === undefined) {
      agent = keepAliveAgent(target);
      agents.set(target.origin, agent);
    }
    return exchange(target, { method: 'POST', headers, body, agent, signal: AbortSignal.timeout(timeoutMs) });
  };
}
