// The token `netdiag monitor pause` and `resume` show the running monitor (docs/monitor.md,
// "Pausing"): made afresh at each start, kept beside the history in a file only the user (or root)
// can read (0600). It is no lock on the control: the page's CSRF token (local-control.ts) is
// readable by anyone who reaches the listener, local users included, and pauses as well.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** Where the token of the monitor keeping the history `database` is: beside it. */
export const controlTokenPath = (database: string): string => `${database}.control-token`;

/** A fresh token written to its file; any file there before (a symlink planted in a shared folder too) is removed first, never followed. */
export function makeControlToken(database: string): string {
  const path = controlTokenPath(database);
  const token = randomBytes(32).toString('base64url');
  rmSync(path, { force: true });
  // 'wx': O_CREAT|O_EXCL, so a file or link made between the removal and here is refused, not written through.
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  return token;
}

/** Removes the token as the monitor stops: a stopped monitor is controlled by no one. */
export function removeControlToken(database: string): void {
  rmSync(controlTokenPath(database), { force: true });
}

/** The running monitor's token, or undefined when there is no file (no monitor running on this history). */
export function readControlToken(database: string): string | undefined {
  try {
    return readFileSync(controlTokenPath(database), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Whether `given` is `token`, in time that does not tell how much of it matched. */
export function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
