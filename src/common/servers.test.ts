import { describe, expect, it } from 'vitest';
import { byRoundTrip, nearest, roundTripMedian, type ListedServer } from './servers.js';

const server = (name: string): ListedServer => ({ name, url: `https://${name}.example.net`, location: name, families: ['ipv4', 'ipv6'] });

describe('the nearest server rule', () => {
  it('a round trip is the median of all but the first, which opened the connection', () => {
    expect(roundTripMedian([100, 1, 2])).toBe(1.5);
    expect(roundTripMedian([1, 100, 100, 2, 3])).toBe(51.5);
    expect(roundTripMedian([7])).toBeNull();
  });

  it('orders by round trip, the unreachable last in list order, and the nearest is the lowest that answered', () => {
    const timed = [
      { server: server('gone'), medianMs: null },
      { server: server('far'), medianMs: 80 },
      { server: server('near'), medianMs: 5 },
      { server: server('lost'), medianMs: null },
    ];
    expect(byRoundTrip(timed).map((t) => t.server.name)).toEqual(['near', 'far', 'gone', 'lost']);
    expect(nearest(timed)?.server.name).toBe('near');
    expect(nearest([{ server: server('gone'), medianMs: null }])).toBeUndefined();
  });
});
