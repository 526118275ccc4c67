import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { CACHE } from '../http/headers.js';
import { mountRoute } from '../http/methods.js';
import { baseHeaders, utf8Length } from '../http/respond.js';

/**
 * The OpenAPI document, served as is (not in the `{data, meta}` envelope) so that tools that
 * read OpenAPI documents can load it straight from the service.
 */
export function mountOpenApi(app: Hono<AppEnv>, document: unknown): void {
  const body = JSON.stringify(document);
  const length = String(utf8Length(body));
  mountRoute(app, '/v1/openapi.json', {
    GET: [
      (c) => {
        const headers = baseHeaders(c, CACHE.openapi);
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = length;
        return new Response(body, { status: 200, headers });
      },
    ],
  });
}
