// System packages some suites need (README, "Tests"). Under CI a missing one fails the run;
// on a developer's machine the suite is skipped with a visible notice.
import { execFileSync } from 'node:child_process';

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
