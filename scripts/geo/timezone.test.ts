// The zone filled in for the embedded data, at coordinates whose zone is known from the IANA
// database's own examples (each zone's principal city). The build fills it (scripts/geo/).
import { describe, expect, it } from 'vitest';
import { zoneAt } from './timezone.js';

describe('zoneAt', () => {
  it.each([
    [51.5074, -0.1278, 'Europe/London'],
    [48.8566, 2.3522, 'Europe/Paris'],
    [35.6762, 139.6503, 'Asia/Tokyo'],
    [-33.8688, 151.2093, 'Australia/Sydney'],
    [40.7128, -74.006, 'America/New_York'],
    [37.422, -122.085, 'America/Los_Angeles'],
    [-23.5505, -46.6333, 'America/Sao_Paulo'],
    [28.6139, 77.209, 'Asia/Kolkata'],
  ])('(%f, %f) is %s', (latitude, longitude, zone) => {
    expect(zoneAt(latitude, longitude)).toBe(zone);
  });

  it('is null without coordinates, or for ones outside the globe', () => {
    expect(zoneAt(null, 10)).toBeNull();
    expect(zoneAt(10, null)).toBeNull();
    expect(zoneAt(91, 0)).toBeNull();
  });
});
