// Preloaded (-r) into the benchmark's processes, which run with --expose-gc: SIGUSR2 runs four
// full collections in a row. V8 keeps a map that only optimized code still points to for two
// major collections (--retain-maps-for-n-gc, default 2) and drops it at the third; the code that
// relied on it is deoptimised and, in Node 20's http and stream internals, does not get back to
// its first speed. A server that lives for a while always ends up there, a bare server that keeps
// nothing between requests never runs a major collection, so run.mjs measures both sides again in
// that aged state instead of comparing an aged server with a fresh baseline.
process.on('SIGUSR2', () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
});
