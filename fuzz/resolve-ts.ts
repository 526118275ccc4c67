// A module resolution hook so that Node runs the project's TypeScript as it is, with no build:
// the sources import each other as `./x.js` (what tsc's NodeNext resolution wants), and Node's
// type stripping does not rewrite specifiers, so a relative `.js` import from a `.ts` file that
// has no such `.js` file is resolved to the `.ts` beside it. Registered by register.ts.
import { existsSync } from 'node:fs';
import type { ResolveHook } from 'node:module';
import { fileURLToPath } from 'node:url';

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  const parent = context.parentURL;
  if (parent?.endsWith('.ts') === true && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const candidate = new URL(`${specifier.slice(0, -3)}.ts`, parent);
    if (!existsSync(fileURLToPath(new URL(specifier, parent))) && existsSync(fileURLToPath(candidate))) {
      return nextResolve(candidate.href, context);
    }
  }
  return nextResolve(specifier, context);
};
