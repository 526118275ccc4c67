import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalescer.js';

describe('Coalescer', () => {
  it('does identical work once while it is in flight; each later caller gets its own promise', async () => {
    const deferred: Promise<unknown>[] = [];
    const shared = new Coalescer<number>((p) => deferred.push(p));
    let calls = 0;
    let finish: (value: number) => void = () => undefined;
    const work = () => {
      calls += 1;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const first = shared.run('k', work, 1_000, () => new Error('late'));
    const second = shared.run('k', work, 1_000, () => new Error('late'));
    const other = shared.run('other', () => Promise.resolve(7), 1_000, () => new Error('late'));
    expect(calls).toBe(1);
    expect(second).not.toBe(first);
    finish(42);
    expect(await Promise.all([first, second, other])).toEqual([42, 42, 7]);
    expect(deferred).toHaveLength(2);
    expect(shared.size).toBe(0);
    // Settled work is not kept: the next caller does it again.
    const again = shared.run('k', work, 1_000, () => new Error('late'));
    finish(1);
    expect(await again).toBe(1);
    expect(calls).toBe(2);
  });

  it('hands a failure to every caller', async () => {
    const shared = new Coalescer<number>();
    const work = () => Promise.reject(new Error('upstream down'));
    const results = await Promise.allSettled([shared.run('k', work, 1_000, () => new Error('late')), shared.run('k', work, 1_000, () => new Error('late'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(shared.size).toBe(0);
  });
});

describe('a caller that joins', () => {
  it('fails with late() at its own deadline, while the work goes on for the others', async () => {
    const shared = new Coalescer<number>();
    let finish: (value: number) => void = () => undefined;
    const first = shared.run('k', () => new Promise<number>((resolve) => (finish = resolve)), 1_000, () => new Error('late'));
    const patient = shared.run('k', () => Promise.resolve(0), 1_000, () => new Error('late'));
    const hasty = shared.run('k', () => Promise.resolve(0), 20, () => new Error('late'));
    await expect(hasty).rejects.toThrow('late');
    finish(5);
    expect(await Promise.all([first, patient])).toEqual([5, 5]);
  });
});
