// The package's version. The client-only bundle (scripts/pack-client.mjs) has it written in at
// bundling as NETDIAG_BUNDLED_VERSION, since no package.json lies two levels up from that one
// file; otherwise it is read from package.json, three levels up from src/cli/program and dist/cli/program alike.
import { createRequire } from 'node:module';

declare const NETDIAG_BUNDLED_VERSION: string | undefined;

export const VERSION =
  typeof NETDIAG_BUNDLED_VERSION === 'string' ? NETDIAG_BUNDLED_VERSION : (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

/** What the client reports as analytics `tool_version` (the API contract: at most 40 characters). */
export const TOOL_VERSION = `netdiag-cli/${VERSION}`;
