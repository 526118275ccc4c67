// A module resolution hook (node:module register) that lets the build run its TypeScript
// (scripts/geo/) in place with Node's type stripping, importing the run-time sources it shares
// layouts with (src/runtime/node/ports/geo-lookup/*.ts). This project writes relative imports as `./x.js`, as
// tsc's NodeNext resolution wants for the emitted dist/; Node's type stripping does not map them
// to `./x.ts`, so this hook does, and only that: a relative `.js` import from a `.ts` file that
// names no file resolves to the `.ts` file beside it. Everything else resolves as Node would.
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    const fromTypeScript = context.parentURL?.endsWith('.ts') === true;
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !fromTypeScript || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) throw err;
    return nextResolve(`${specifier.slice(0, -'.js'.length)}.ts`, context);
  }
}
