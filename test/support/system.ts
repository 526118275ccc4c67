// System packages some suites need (README, "Tests"). Under CI a missing one fails the run;
// on a developer's machine the suite is skipped with a visible notice. And what the kernel counts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function hasCommand(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when the suite can run; throws under CI when a command is missing. */
export function requireCommands(suite: string, commands: string[], debianPackages: string): boolean {
  const missing = commands.filter((c) => !hasCommand(c));
  if (missing.length === 0) return true;
  const message = `${suite}: missing ${missing.join(', ')} (apt-get install ${debianPackages})`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI requires it`);
  process.stderr.write(`\n*** SKIPPED ${message} ***\n\n`);
  return false;
}

/**
 * UDP datagrams this machine's kernel has dropped so far because a socket's receive buffer was
 * full (/proc/net/snmp, Udp RcvbufErrors; Linux): loss on the host itself, which no relay sees.
 */
export function udpReceiveBufferDrops(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('Udp: '));
  const names = (lines[0] ?? '').split(' ');
  const values = (lines[1] ?? '').split(' ');
  const at = names.indexOf('RcvbufErrors');
  if (at === -1) throw new Error('/proc/net/snmp has no Udp RcvbufErrors');
  return Number(values[at]);
}
