// Runs in Node before the workerd suites: the peers a Worker talks to, on loopback. Knot behind a
// DoH front (with the faults of test/support/doh-relay.ts), an analytics collector, and a
// `netdiag probe` for a URL probe. Their URLs reach the tests through vitest's provide/inject.
import type { TestProject } from 'vitest/node';
import { startCollector } from '../support/collector.js';
import { startFaultyDohFront } from '../support/doh-relay.js';
import { startKnot } from '../support/knot.js';
import { startProbeProcess } from '../support/probe.js';
import { requireCommands } from '../support/system.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The DoH front's URL, or '' when Knot is not installed (a developer's laptop). */
    dohUrl: string;
    collectorUrl: string;
    probeUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const closers: (() => Promise<void>)[] = [];
  let dohUrl = '';
  if (requireCommands('workerd DNS suite', ['knotd'], 'knot')) {
    const knot = await startKnot();
    const front = await startFaultyDohFront(knot.port);
    closers.push(() => front.close(), () => knot.close());
    dohUrl = front.url;
  }
  const collector = await startCollector('accept');
  closers.push(() => collector.close());
  const probe = await startProbeProcess();
  closers.push(() => probe.kill('SIGTERM'));
  project.provide('dohUrl', dohUrl);
  project.provide('collectorUrl', collector.url);
  project.provide('probeUrl', `http://127.0.0.1:${String(probe.port)}`);
  return async () => {
    for (const close of closers) await close();
  };
}
