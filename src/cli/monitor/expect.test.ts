// The monitor's expectations: thresholds absolute and relative to a contracted rate, grades, and
// what a missing figure means.
import { describe, expect, it } from 'vitest';
import { breaches, meets, parseExpectation, type Expectation } from './expect.js';

const parsed = (figure: string, condition: string): Expectation => {
  const e = parseExpectation(figure, condition);
  if (typeof e === 'string') throw new Error(e);
  return e;
};

describe('monitor expectations', () => {
  it('hold a rate to a share of the contracted one: ">= 70% of 500" is met at 350 and not at 349.9', () => {
    const e = parsed('download_mbps', '>= 70% of 500');
    expect(meets(e, 350)).toBe(true);
    expect(meets(e, 349.9)).toBe(false);
  });

  it('compare strictly or not as written', () => {
    expect(meets(parsed('latency_ms', '< 20'), 20)).toBe(false);
    expect(meets(parsed('latency_ms', '<= 20'), 20)).toBe(true);
    expect(meets(parsed('rpm', '> 400'), 400)).toBe(false);
  });

  it('hold a grade to a band: "<= B" meets A+, A and B, and not C; "< B" not B', () => {
    const e = parsed('bufferbloat_grade', '<= B');
    expect(['A+', 'A', 'B', 'C', 'F'].map((g) => meets(e, g))).toEqual([true, true, true, false, false]);
    expect(meets(parsed('bufferbloat_grade', '< b'), 'B')).toBe(false);
    expect(parseExpectation('bufferbloat_grade', '>= B')).toMatch(/^a grade is held to "<= B"/);
  });

  it('count a figure the run did not take as a breach, and say which', () => {
    const list = [parsed('download_mbps', '>= 40'), parsed('upload_mbps', '>= 10')];
    expect(breaches(list, { download_mbps: 12.5, upload_mbps: null })).toEqual(['download_mbps 12.5 (expected >= 40)', 'upload_mbps not measured (expected >= 10)']);
    expect(breaches(list, { download_mbps: 41, upload_mbps: 11 })).toEqual([]);
  });

  it('refuse a condition that is no number nor share of one', () => {
    expect(parseExpectation('download_mbps', '>= fast')).toMatch(/^"fast" is not a number/);
    expect(parseExpectation('download_mbps', 'fast')).toMatch(/^"fast" is not a condition/);
  });
});
