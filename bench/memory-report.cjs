// Preloaded (-r) into the service by the soak benchmark, after force-gc.cjs and with
// --expose-gc: every 10 s one JSON line on stdout with the process's own memory figures (heap
// used and total are only visible from inside), and on SIGUSR2, once force-gc.cjs's full
// collections have run, the same figures marked `after_gc`: the live heap, not its garbage.
const report = (key) => {
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ [key]: { rss, heapUsed, heapTotal, external }, at: Date.now() })}\n`);
};
setInterval(() => report('bench_memory'), 10_000).unref();
process.on('SIGUSR2', () => report('bench_memory_after_gc'));
