// MaxMind's own test databases (GeoIP2-City-Test, GeoLite2-ASN-Test, ...), for the suites of an
// operator-supplied geo database. They are not in this repository (MaxMind publishes them with
// its reader libraries): the suites read them from NETDIAG_MAXMIND_FIXTURES, or from a
// `shared/fixtures/maxmind/` folder beside the checkout. Without them a suite is skipped with a
// visible notice, except under CI=true, where they are required.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DEFAULT_DIR = fileURLToPath(new URL('../../../shared/fixtures/maxmind/', import.meta.url));

/** The folder holding the test databases (ending in `/`), or undefined (with the notice) when there is none. */
export function maxmindFixtures(suite: string): string | undefined {
  const configured = process.env.NETDIAG_MAXMIND_FIXTURES;
  const dir = configured === undefined || configured === '' ? DEFAULT_DIR : configured.endsWith('/') ? configured : `${configured}/`;
  if (existsSync(`${dir}GeoIP2-City-Test.mmdb`)) return dir;
  const message = `${suite}: no MaxMind test databases at ${dir} (set NETDIAG_MAXMIND_FIXTURES)`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI requires them`);
  process.stderr.write(`\n*** SKIPPED ${message} ***\n\n`);
  return undefined;
}
