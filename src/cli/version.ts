// The package's version, from its package.json (two levels up from src/cli and from dist/cli alike).
import { createRequire } from 'node:module';

export const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** What the client reports as analytics `tool_version` (the API contract: at most 40 characters). */
export const TOOL_VERSION = `netdiag-cli/${VERSION}`;
