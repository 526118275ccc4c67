import { describe, expect, it } from 'vitest';
import { bufferbloat } from './bufferbloat.js';

describe('bufferbloat grade', () => {
  it.each([
    [10, 10, 'A+', 0],
    [10, 14.9, 'A+', 4.9],
    [10, 15, 'A', 5],
    [10, 39.9, 'A', 29.9],
    [10, 40, 'B', 30],
    [10, 70, 'C', 60],
    [10, 209.9, 'C', 199.9],
    [10, 210, 'D', 200],
    [10, 410, 'F', 400],
    [20, 5, 'A+', 0],
  ])('idle %s ms, loaded %s ms: %s (+%s ms)', (idle, loaded, grade, increase) => {
    expect(bufferbloat(idle, loaded)).toMatchObject({ grade, increaseMs: increase });
  });

  it('is undefined when either latency is missing', () => {
    expect(bufferbloat(undefined, 30)).toBeUndefined();
    expect(bufferbloat(10, undefined)).toBeUndefined();
  });
});
