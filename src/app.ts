import { Hono, type Context } from 'hono';
import { routePath } from 'hono/route';
import { mountDns } from './dns/route.js';
import { mountEvents } from './events/route.js';
import { mountHealth } from './health/route.js';
import type { AppEnv } from './http/context.js';
import { Problem } from './http/problems.js';
import { problem } from './http/respond.js';
import { mountIp } from './ip/route.js';
import { mountLatency } from './latency/routes.js';
import { mountOpenApi } from './openapi/route.js';
import type { Services } from './services.js';
import { mountSpeedTest } from './speedtest/route.js';

export type App = Hono<AppEnv>;

/**
 * Builds the HTTP app from its capabilities. No I/O, no environment, no runtime imports:
 * a runtime passes `Services` in and serves `app.fetch` (ARCHITECTURE.md, "one core, thin runtimes").
 */
export function createApp(services: Services): App {
  const app = new Hono<AppEnv>();
  const problemBase = (c: Context<AppEnv>) => services.publicUrl ?? new URL(c.req.url).origin;

  app.use(async (c, next) => {
    const receivedAt = services.clock.now();
    c.set('state', { requestId: services.newId(), receivedAt, rateHeaders: undefined, caller: undefined });
    await next();
    // Access log: route pattern, never the caller's address, User-Agent, query or body.
    const route = routePath(c, -1);
    services.logger.info({
      request_id: c.var.state.requestId,
      method: c.req.method,
      route: route.startsWith('/v1/') ? route : null,
      status: c.res.status,
      duration_ms: services.clock.now() - receivedAt,
    });
  });

  mountHealth(app);
  mountSpeedTest(app);
  mountLatency(app, services);
  mountIp(app, services);
  mountDns(app, services);
  mountEvents(app, services);
  mountOpenApi(app, services.openapi);

  app.notFound((c) => problem(c, 'not_found', 'No resource exists at this path.', problemBase(c)));

  app.onError((err, c) => {
    if (err instanceof Problem) return problem(c, err.code, err.message, problemBase(c), err.headers);
    // Anything else is a bug: log it here, answer with a 500 that reveals nothing (spec §7).
    services.logger.error({ request_id: c.var.state.requestId, err }, 'unhandled error');
    return problem(c, 'internal_error', 'The service failed to handle this request.', problemBase(c));
  });

  return app;
}
