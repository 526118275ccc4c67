// Calls the Worker's own fetch handler inside workerd with the suite's bindings (wrangler.jsonc)
// and vars chosen per test: each distinct set of vars is a new env object, so a new app.
import { env } from 'cloudflare:workers';
import worker from '../../src/runtime/workers/adapter/entry.js';
import type { WorkerEnv } from '../../src/runtime/workers/adapter/env.js';
import { inject } from 'vitest';

export interface Reply {
  status: number;
  headers: Headers;
  /** The parsed JSON body, null when there is none. */
  body: unknown;
  text: string;
}

/** A full `request.cf` as the platform sends it (strings for coordinates, a number for asn). */
export const FULL_CF = {
  asn: 64500,
  asOrganization: 'Example Networks',
  colo: 'AMS',
  httpProtocol: 'HTTP/2',
  tlsVersion: 'TLSv1.3',
  city: 'Amsterdam',
  region: 'North Holland',
  country: 'NL',
  postalCode: '1012',
  timezone: 'Europe/Amsterdam',
  latitude: '52.37403',
  longitude: '4.88969',
} as const;

export interface SendOptions extends RequestInit {
  cf?: Record<string, unknown>;
  /** The platform's verified caller; absent means no `CF-Connecting-IP` at all. */
  caller?: string;
  /** The scheme the client used; a deployed Worker is reached over HTTPS (the default here). */
  scheme?: 'http' | 'https';
}

/**
 * The suite's DoH front for Knot; on a laptop without Knot, a loopback port with nothing on it,
 * so no test ever reaches the real network (the Worker's default upstream is a public host).
 */
export const SUITE_DOH = inject('dohUrl') === '' ? 'http://127.0.0.1:9/dns-query' : inject('dohUrl');

export function workerWith(vars: Record<string, unknown> = {}) {
  const bound = { ...(env as unknown as WorkerEnv), NETDIAG_DNS_UPSTREAM: SUITE_DOH, ...vars } as WorkerEnv;
  return {
    env: bound,
    /** The Worker's response as it is, its body unread (for a body too large to read whole). */
    open(path: string, options: SendOptions = {}): Promise<Response> {
      const { cf, caller, scheme = 'https', ...init } = options;
      const headers = new Headers(init.headers);
      if (caller !== undefined) headers.set('cf-connecting-ip', caller);
      const request = new Request(`${scheme}://netdiag.test${path}`, { ...init, headers, ...(cf === undefined ? {} : { cf }) });
      return Promise.resolve(worker.fetch(request, bound));
    },
    async send(path: string, options: SendOptions = {}): Promise<Reply> {
      const res = await this.open(path, options);
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      return { status: res.status, headers: res.headers, text, body: text !== '' && type.includes('json') ? (JSON.parse(text) as unknown) : null };
    },
  };
}

/** The problem code of a problem reply. */
export function codeOf(reply: Reply): string | undefined {
  return (reply.body as { code?: string } | null)?.code;
}
