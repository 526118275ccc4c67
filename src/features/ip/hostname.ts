import { canonicalName } from '../../engines/dns/names.js';

/** A PTR target as `reverse_hostname`: a valid host name, lower case, no trailing dot; else null. */
export function hostnameOrNull(target: string): string | null {
  try {
    return canonicalName(target);
  } catch {
    return null;
  }
}
