// The monitor's expectations: thresholds absolute and relative to a contracted rate, grades, and
// what a missing figure means.
import { describe, expect, it } from 'vitest';
import type { Figure } from './checks/check-kind.js';
import { CHECK_KIND_NAMES, figuresOfKind } from './checks/kinds.js';
import { breaches, meets, parseExpectation as parseFigureExpectation, type Expectation } from './expect.js';

/** The figure some check kind reports under `name`, as the configuration reader finds it. */
function figureNamed(name: string): Figure {
  const figure = CHECK_KIND_NAMES.flatMap(figuresOfKind).find((f) => f.name === name);
  if (figure === undefined) throw new Error(`no check reports ${name}`);
  return figure;
}

const parseExpectation = (name: string, condition: string): Expectation | string => parseFigureExpectation(figureNamed(name), condition);

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
    expect(parseExpectation('download_mbps', '>= fast')).toBe('"fast" is not a number (of Mbit/s), nor a share of one ("70% of 500")');
    expect(parseExpectation('download_mbps', 'fast')).toMatch(/^"fast" is not a condition/);
  });

  it('hold a text figure to a value: ipv6 "= ok" is met by ok and not by failed; "!= name_error" the other way', () => {
    const e = parsed('ipv6', '= ok');
    expect([meets(e, 'ok'), meets(e, 'failed'), meets(e, undefined)]).toEqual([true, false, false]);
    const n = parsed('response_code', '!= name_error');
    expect([meets(n, 'no_error'), meets(n, 'name_error')]).toEqual([true, false]);
    expect(parseExpectation('ipv6', '= up')).toBe('"up" is not a value ipv6 takes (ok, failed, timeout, unchecked)');
    expect(parseExpectation('answers', '>= 3')).toMatch(/^">= 3" is not a condition for answers: write "= value", "!= value" or "unchanged"$/);
  });

  it('hold a DNS answer unchanged from the last run that met every expectation, and say both answers when it changed', () => {
    const e = parsed('answers', 'unchanged');
    expect(meets(e, '192.0.2.1', undefined)).toBe(true);
    expect(meets(e, '192.0.2.1', '192.0.2.1')).toBe(true);
    expect(meets(e, '192.0.2.9', '192.0.2.1')).toBe(false);
    expect(breaches([e], { answers: '192.0.2.9' }, { answers: '192.0.2.1' })).toEqual(['answers "192.0.2.9" (expected unchanged from "192.0.2.1")']);
    expect(breaches([e], { answers: '192.0.2.1' }, { answers: '192.0.2.1' })).toEqual([]);
  });
});
