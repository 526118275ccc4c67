// Every fuzz target by name (its module is fuzz/targets/<name>.ts, its seeds fuzz/corpus/<name>/),
// with its fresh inputs (generators.ts).
import type fc from 'fast-check';
import { GENERATORS } from './generators.js';
import * as accept from './targets/accept.js';
import * as address from './targets/address.js';
import * as dns from './targets/dns.js';
import * as forwarded from './targets/forwarded.js';
import * as history from './targets/history.js';
import * as proxyProtocol from './targets/proxy-protocol.js';
import * as query from './targets/query.js';
import * as reverseZone from './targets/reverse-zone.js';
import * as rpmConfig from './targets/rpm-config.js';
import * as share from './targets/share.js';

export interface Target {
  /** Jazzer.js's shape: one input, and any throw is a finding. */
  fuzz(data: Buffer): void;
  inputs: fc.Arbitrary<Uint8Array>;
}

const MODULES = { dns, 'proxy-protocol': proxyProtocol, forwarded, address, query, accept, share, history, 'reverse-zone': reverseZone, 'rpm-config': rpmConfig };

export type TargetName = keyof typeof MODULES;

export const TARGET_NAMES = Object.keys(MODULES) as TargetName[];

export const TARGETS: Record<TargetName, Target> = Object.fromEntries(TARGET_NAMES.map((name) => [name, { fuzz: MODULES[name].fuzz, inputs: GENERATORS[name] }])) as Record<TargetName, Target>;

export const isTargetName = (name: string): name is TargetName => Object.hasOwn(MODULES, name);
