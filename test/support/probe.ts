// Starts the regional probe the way an operator does, `npm run probe`, optionally inside a
// network namespace. The build is the suite's own (pretest), so npm's pre-scripts are skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ProbeProcess {
  port: number;
  child: ChildProcess;
  /** Signals the whole process group (npm, its shell and the probe). */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Resident memory of the probe's own Node process, in MiB. */
  rssMiB(): number;
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The descendant of `pid` that runs the netdiag CLI. */
function probePid(pid: number): number | undefined {
  for (const child of children(pid)) {
    const cmdline = readFileSync(`/proc/${child}/cmdline`, 'utf8');
    if (cmdline.includes('main.js\0probe')) return child;
    const deeper = probePid(child);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

export async function startProbeProcess(options: { port?: number; host?: string; wrap?: (argv: string[]) => string[] } = {}): Promise<ProbeProcess> {
  const argv = (options.wrap ?? ((a) => a))(['npm', 'run', '--silent', '--ignore-scripts', 'probe']);
  const child = spawn(argv[0] ?? 'npm', argv.slice(1), {
    cwd: ROOT,
    env: { ...process.env, PORT: String(options.port ?? 0), HOST: options.host ?? '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => { reject(new Error(`npm run probe exited with ${String(code)}: ${err}`)); });
  });
  return {
    port,
    child,
    kill: async (signal) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      process.kill(-(child.pid ?? 0), signal);
      await exited;
    },
    rssMiB: () => {
      const pid = probePid(child.pid ?? 0);
      if (pid === undefined) throw new Error('probe process not found');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      return kb / 1024;
    },
  };
}
