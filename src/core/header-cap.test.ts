import { describe, expect, it } from 'vitest';
import { listHead, listTail } from './header-cap.js';

describe('list header caps (issue 50)', () => {
  it('passes a list within the bound whole', () => {
    expect(listHead('gzip, br', 8)).toBe('gzip, br');
    expect(listTail('a, b', 4)).toEqual({ tail: 'a, b', cut: false });
  });
  it('keeps the first elements that fit, cut at a comma, never inside an element', () => {
    expect(listHead('gzip, deflate, br', 12)).toBe('gzip');
    expect(listHead('gzip, deflate, br', 13)).toBe('gzip, deflate');
    expect(listHead('x'.repeat(20), 8)).toBe('');
  });
  it('keeps the last elements that fit, cut at a comma, and says it cut', () => {
    expect(listTail('1.1.1.1, 2.2.2.2, 3.3.3.3', 10)).toEqual({ tail: ' 3.3.3.3', cut: true });
    expect(listTail('1.1.1.1, 2.2.2.2, 3.3.3.3', 18)).toEqual({ tail: ' 2.2.2.2, 3.3.3.3', cut: true });
    expect(listTail('x'.repeat(20), 8)).toEqual({ tail: '', cut: true });
  });
});
