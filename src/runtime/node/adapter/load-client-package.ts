// The packed client the build leaves in dist/client/ (scripts/pack-client.mjs, run by every
// build), read once at start for /client/netdiag-client.tgz (src/features/client-package.ts).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ClientPackage } from '../../../features/client-package.js';

/** The project's dist/client/, from this module compiled (dist/runtime/node/) or run from source (src/runtime/node/, the tests). */
const FOLDER = fileURLToPath(new URL('../../../../dist/client/', import.meta.url));

/** The one netdiag-client-<version>.tgz there (each packing empties the folder first), or undefined when none. */
export function loadClientPackage(folder = FOLDER): ClientPackage | undefined {
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => /^netdiag-client-[0-9A-Za-z.+-]+\.tgz$/.test(name));
  } catch {
    return undefined;
  }
  const fileName = names.sort().at(-1);
  if (fileName === undefined) return undefined;
  const bytes = readFileSync(`${folder}/${fileName}`);
  return { bytes, fileName, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
}
