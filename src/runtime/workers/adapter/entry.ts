import { createApp, type App } from '../../../app/app.js';
import { detachedProblem, headerPairs } from '../../../core/http/respond.js';
import { ConfigError, loadWorkersConfig } from './config.js';
import type { WorkerEnv } from './env.js';
import { consoleLogger } from '../ports/logger.js';
import { workersConnection } from './connection.js';
import { workersServices } from './services.js';

export { RateLimitCounter } from '../ports/limiter-store/durable-object.js';
export { RegionProbe } from '../ports/probe-durable-object.js';

/**
 * One app per isolate and env: the DNS cache, the limiter fallback and warmed probes live as
 * long as the isolate does. A bad var is a ConfigError, logged once with the variable's name;
 * every request then gets a 500 problem that says the service is misconfigured, never an answer
 * built on a wrong setting.
 */
const apps = new WeakMap<WorkerEnv, App | ConfigError>();

function appFor(env: WorkerEnv): App | ConfigError {
  let app = apps.get(env);
  if (app === undefined) {
    try {
      app = createApp(workersServices(loadWorkersConfig(env), env));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      consoleLogger('error').error({ variable: err.variable, reason: err.message }, `configuration error: ${err.variable} ${err.message}`);
      app = err;
    }
    apps.set(env, app);
  }
  return app;
}

export default {
  async fetch(request: Request, env: WorkerEnv): Promise<Response> {
    const app = appFor(env);
    if (app instanceof ConfigError) {
      const reply = detachedProblem('internal_error', 'The service is misconfigured; its log names the setting.', new URL(request.url).origin, crypto.randomUUID());
      return new Response(request.method === 'HEAD' ? null : reply.body, { status: reply.status, headers: headerPairs(reply.headers) });
    }
    return app.fetch(request, workersConnection(request));
  },
} satisfies ExportedHandler<WorkerEnv>;
