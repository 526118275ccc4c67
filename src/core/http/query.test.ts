import { describe, expect, it } from 'vitest';
import { Problem } from './problems.js';
import { queryParameters } from './query.js';

describe('queryParameters', () => {
  // Found by fuzzing (fuzz/targets/query.ts): with a plain object, __proto__ or toString read as given already.
  it('takes a key named like an Object property as any other key: once is fine, twice is refused', () => {
    for (const key of ['__proto__', 'toString', 'constructor', 'hasOwnProperty']) {
      expect(queryParameters(`${key}=1`, [key])).toEqual(Object.assign(Object.create(null) as object, { [key]: '1' }));
      expect(() => queryParameters(`${key}=1&${key}=2`, [key])).toThrow(Problem);
    }
  });
});
