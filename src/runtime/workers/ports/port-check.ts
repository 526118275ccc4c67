// Workers' port check port: none, and why (src/core/ports/port-check.ts).
import type { PortCheck } from '../../../core/ports/port-check.js';

/**
 * Workers can open TCP sockets, but netdiag does not make a Worker connect to its callers: the
 * answer would come from whichever Cloudflare location ran it, through Cloudflare's own egress,
 * and the platform refuses some ports and address ranges.
 */
export const WORKERS_PORT_CHECK: PortCheck = { unavailable: 'The port check is not served on Cloudflare Workers: this deployment does not open connections to its callers. A netdiag server on Node answers /port/N when its operator turns it on.' };
