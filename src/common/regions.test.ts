// The regions' one list (src/common/regions.ts) held to the API contract's RegionId enum, and the
// problem a wrong region gets naming each of them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROBLEMS } from '../core/http/problems.js';
import { REGION_IDS } from './regions.js';

const schemas = (parse(readFileSync(new URL('../../openapi/openapi.yaml', import.meta.url), 'utf8')) as { components: { schemas: Record<string, { enum?: string[] }> } }).components.schemas;

describe('the regions', () => {
  it("are the contract's RegionId enum, in its order", () => {
    expect([...REGION_IDS]).toEqual(schemas.RegionId?.enum);
  });

  it('are each named by the unknown_region problem', () => {
    expect(REGION_IDS.filter((id) => !PROBLEMS.unknown_region.action.includes(id))).toEqual([]);
  });
});
