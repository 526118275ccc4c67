import type { Handler } from 'hono';
import type { AppEnv } from './context.js';
import { Problem } from './problems.js';

/** Placeholder for a route whose behaviour lands in a later issue: an honest 501, never fake data. */
export function notImplemented(what: string): Handler<AppEnv> {
  return () => {
    throw new Problem('not_implemented', `${what} is not implemented in this version of the service.`);
  };
}
