// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.

/** The seven regions: identifiers and names are stable API data (the API contract, docs/api.md). */
export const REGIONS = [
  { id: 'wnam', name: 'Western North America' },
  { id: 'enam', name: 'Eastern North America' },
  { id: 'weur', name: 'Western Europe' },
  { id: 'eeur', name: 'Eastern Europe' },
  { id: 'apac-ne', name: 'Asia-Pacific Northeast' },
  { id: 'apac-se', name: 'Asia-Pacific Southeast' },
  { id: 'oc', name: 'Oceania' },
] as const;

export type RegionId = (typeof REGIONS)[number]['id'];

export const REGION_IDS: readonly RegionId[] = REGIONS.map((r) => r.id);

export function isRegionId(value: string): value is RegionId {
  return (REGION_IDS as readonly string[]).includes(value);
}
