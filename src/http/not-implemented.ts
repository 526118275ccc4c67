import { Problem } from './problems.js';
import type { Handler } from './types.js';

/** Placeholder for a route whose behaviour lands in a later issue: an honest 501, never fake data. */
export function notImplemented(what: string): Handler {
  return () => {
    throw new Problem('not_implemented', `${what} is not implemented in this version of the service.`);
  };
}
