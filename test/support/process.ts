// Runs the built `netdiag` command as a user would, for whole-program tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `netdiag <args>` to completion (bounded by `timeoutMs`). */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 10_000): Promise<Finished> {
  return runProcess(process.execPath, [CLI, ...args], { PATH: process.env.PATH ?? '', ...env }, timeoutMs);
}

/** Runs `file` with `args` and exactly `env`, to its end or `timeoutMs` (then killed): its exit code and output. */
export async function runProcess(file: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<Finished> {
  const child = spawn(file, args, { env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close': after the child's output is all read ('exit' may come before its last lines).
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface Serving {
  child: ChildProcess;
  port: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `netdiag serve` on an ephemeral loopback port and waits for its `listening` line; with
 * NETDIAG_WORKERS, for the primary thread's, which comes once every worker thread listens.
 * `command` runs something else that serves the same way (a test harness), its stdin a pipe.
 */
export async function serveCli(env: Record<string, string> = {}, command: string[] = [CLI, 'serve']): Promise<Serving> {
  const child = spawn(process.execPath, command, {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // 'close', not 'exit': 'exit' may come while the child's stdout still holds its last lines (Node's
  // child_process docs), and a test that read the log then missed "stopped" (seen in CI).
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = (env.NETDIAG_WORKERS === undefined ? /"port":(\d+)[^\n]*"msg":"listening"/ : /"port":(\d+)[^\n]*"role":"primary"[^\n]*"msg":"listening"/).exec(out);
      if (match) resolve(Number(match[1]));
    });
    void exited.then((code) => { reject(new Error(`netdiag exited with ${String(code)} before listening`)); });
  });
  return { child, port, stdout: () => out, stderr: () => err, exited };
}

/** Ends a peer the suite started: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited (at once if it had). */
export async function stopChild(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}
