// Fuzz target: a responsiveness configuration as `netdiag rpm` reads it (readRpmConfig,
// src/cli/rpm/responsiveness-config.ts), JSON a server chose. Its contract: only RpmConfigError is thrown; a
// configuration taken has three https URLs of one origin, and that origin is the configuration's
// own or one the user allowed, never another (issue 69: a configuration aimed the load elsewhere).
import { readRpmConfig, RpmConfigError } from '../../src/cli/rpm/responsiveness-config.js';
import { check, outcome } from '../invariant.js';

const CONFIG_URL = 'https://config.test/.well-known/nq';
const ALLOWED = ['https://allowed.test:8443'];

export function fuzz(data: Buffer): void {
  const text = data.toString('utf8');
  const read = outcome('rpm-config/only-config-error', () => readRpmConfig(text, CONFIG_URL, ALLOWED), (err) => err instanceof RpmConfigError && err.message !== '');
  if (!read.ok) return;
  const { small, large, upload, origin } = read.value;
  const where = () => `${JSON.stringify(text)} gave ${JSON.stringify({ small: small.href, large: large.href, upload: upload.href, origin })}`;
  check([small, large, upload].every((u) => u.protocol === 'https:' && u.origin === origin), 'rpm-config/one-https-origin', where);
  check(origin === new URL(CONFIG_URL).origin || ALLOWED.includes(origin), 'rpm-config/load-only-where-named', where);
}
