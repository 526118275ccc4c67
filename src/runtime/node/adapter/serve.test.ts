// The Node the service warns about at start: older than the 22.12 it is built and tested on.
import { describe, expect, it } from 'vitest';
import { nodeIsSupported } from './serve.js';

describe('the Node version check at start-up', () => {
  it('accepts 22.12 and later, warns about anything older', () => {
    expect(['22.12.0', '22.23.3', '23.0.0', '24.11.1'].map(nodeIsSupported)).toEqual([true, true, true, true]);
    expect(['22.11.0', '20.19.5', '18.20.8'].map(nodeIsSupported)).toEqual([false, false, false]);
  });
});
