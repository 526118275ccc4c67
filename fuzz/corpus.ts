// The seed corpus kept in the repository, fuzz/corpus/<target>/: one input per file, as bytes.
// Files named `regression-*` are inputs that once broke an invariant (docs/fuzzing.md).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CORPUS_ROOT = join(import.meta.dirname, 'corpus');

export interface CorpusEntry {
  name: string;
  bytes: Uint8Array;
}

/** The entries of a target's corpus directory, by name. */
export function readCorpus(target: string, root = CORPUS_ROOT): CorpusEntry[] {
  const dir = join(root, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.') && !name.endsWith('.md'))
    .sort()
    .map((name) => ({ name, bytes: new Uint8Array(readFileSync(join(dir, name))) }));
}

/** Writes `bytes` into `dir` under a name made of `prefix` and its hash, so a rerun adds no duplicate; returns the path. */
export function writeInput(dir: string, bytes: Uint8Array, prefix = ''): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${prefix}${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`);
  writeFileSync(path, bytes);
  return path;
}
