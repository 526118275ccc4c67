// The reverse-proxy configurations operators copy from docs/proxies/, read by the suites that run
// them: only addresses, ports and certificate paths are replaced, each replacement required to
// match exactly once, so a file edited out of the test's reach fails the suite rather than
// leaving it running a copy.
import { readFileSync } from 'node:fs';

/** docs/proxies/`file` with each `[text, replacement]` applied; each text must occur exactly once. */
export function documentedConfig(file: string, replacements: readonly (readonly [string, string])[]): string {
  let text = readFileSync(new URL(`../../docs/proxies/${file}`, import.meta.url), 'utf8');
  for (const [from, to] of replacements) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`docs/proxies/${file}: expected "${from}" once, found it ${String(count)} times`);
    text = text.replace(from, to);
  }
  return text;
}
