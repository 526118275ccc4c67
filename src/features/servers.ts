import type { ListedServer } from '../common/servers.js';
import { CACHE } from '../core/http/headers.js';
import { envelopeSerialized, serialize } from '../core/http/respond.js';
import type { RouteDefinition } from '../core/http/router.js';

/**
 * `GET /v1/servers` (an addition): the operator's deployments (`NETDIAG_SERVERS`), so the page and
 * the command line can time each and measure against the nearest. The same for every caller and
 * nothing about one: cacheable and unlimited, like the family origins. An empty list when unset.
 */
export function serversRoute(servers: readonly ListedServer[]): RouteDefinition {
  const data = serialize({ servers });
  return { path: '/v1/servers', GET: { limit: null, handle: (ctx) => envelopeSerialized(ctx, data, CACHE.servers) } };
}
