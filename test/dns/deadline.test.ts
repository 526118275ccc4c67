// The lookup deadline that stands in for an AbortSignal on the DNS transports (src/core/ports/dns-transport.ts).
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/wait.js';
import { Deadline } from '../../src/core/ports/dns-transport.js';

describe('a lookup deadline', () => {
  it('calls each listener once when it passes, and not one that was forgotten', async () => {
    const deadline = new Deadline(5);
    const calls: string[] = [];
    deadline.onExpire(() => calls.push('kept'));
    const forget = deadline.onExpire(() => calls.push('forgotten'));
    forget();
    expect(deadline.expired).toBe(false);
    expect(await eventually(() => deadline.expired, 2_000)).toBe(true);
    expect(calls).toEqual(['kept']);
  });

  it('aborts the signal it hands out, made before or after it passed', async () => {
    const early = new Deadline(5);
    const before = early.signal;
    expect(before.aborted).toBe(false);
    expect(await eventually(() => before.aborted, 2_000)).toBe(true);
    expect(early.signal.aborted).toBe(true);
  });

  it('never fires once cleared', async () => {
    const deadline = new Deadline(5);
    let fired = false;
    deadline.onExpire(() => (fired = true));
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).toBe(false);
    expect(deadline.expired).toBe(false);
  });
});
