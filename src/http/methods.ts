import type { Hono } from 'hono';
import type { H } from 'hono/types';
import type { AppEnv } from './context.js';
import { baseHeaders } from './respond.js';
import { Problem } from './problems.js';
import { ALLOWED_REQUEST_HEADERS, PREFLIGHT_MAX_AGE } from './headers.js';

export interface RouteMethods {
  GET?: H<AppEnv>[];
  POST?: H<AppEnv>[];
}

/**
 * Mounts one path: its methods, HEAD for every GET (Hono answers HEAD by running the GET and
 * dropping the body, RFC 9110 §9.3.2), OPTIONS 204, and 405 with `Allow` for anything else
 * (spec §4 rule 5). Route handlers never set CORS or request-id headers themselves.
 */
export function mountRoute(app: Hono<AppEnv>, path: string, methods: RouteMethods): void {
  const allowed: string[] = [];
  if (methods.GET) {
    // Hono composes every handler registered for a path in order: middleware first, then the route.
    for (const handler of methods.GET) app.get(path, handler);
    allowed.push('GET', 'HEAD');
  }
  if (methods.POST) {
    for (const handler of methods.POST) app.post(path, handler);
    allowed.push('POST');
  }
  allowed.push('OPTIONS');
  const allow = allowed.join(', ');

  app.options(path, (c) => {
    const headers = baseHeaders(c, 'no-store');
    headers.Allow = allow;
    headers['Access-Control-Allow-Methods'] = allow;
    headers['Access-Control-Allow-Headers'] = ALLOWED_REQUEST_HEADERS;
    headers['Access-Control-Max-Age'] = PREFLIGHT_MAX_AGE;
    return new Response(null, { status: 204, headers });
  });

  app.all(path, (c) => {
    throw new Problem('method_not_allowed', `Method ${c.req.method} is not supported here; allowed: ${allow}.`, {
      Allow: allow,
    });
  });
}
