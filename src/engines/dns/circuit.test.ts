import { afterEach, describe, expect, it, vi } from 'vitest';
import { Circuit } from './circuit.js';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

afterEach(() => {
  vi.useRealTimers();
});

describe('Circuit on a runtime that drops deferred work', () => {
  it('schedules its recovery probe again when the scheduled one never ran, and closes on its answer', async () => {
    vi.useFakeTimers();
    let probes = 0;
    // The runtime's wall clock, moved by hand: the circuit reads time only through it.
    const clock = { at: 1_700_000_000_000, now: () => clock.at };
    const circuit = new Circuit(() => { probes += 1; return Promise.resolve(); }, silent, () => undefined, clock, { threshold: 1, baseMs: 1_000, maxMs: 1_000 });
    circuit.failure('deadline');
    expect(circuit.admits()).toBe(false);
    // Time passes but the timer never fires (Workers ended the request's waitUntil).
    vi.clearAllTimers();
    clock.at += 10_000;
    expect(circuit.admits()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(probes).toBe(1);
    expect(circuit.admits()).toBe(true);
  });
});
