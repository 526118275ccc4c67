// Debian's nginx and HAProxy as reverse proxies in front of the service, each started by the
// suite from a configuration it writes (test/operators/proxies.test.ts), in the foreground, stopped with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Proxy {
  dir: string;
  close(): Promise<void>;
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${String(child.exitCode)}: ${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => { resolve(false); });
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the proxy never listened on ${String(port)}: ${log()}`);
}

async function start(command: string, args: (dir: string) => string[], config: (dir: string) => string, file: string, ports: number[], logFile?: string): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), `netdiag-${command}-`));
  writeFileSync(join(dir, file), config(dir));
  const child: ChildProcess & { stderr: NodeJS.ReadableStream } = spawn(command, args(dir), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const log = () => {
    let text = stderr;
    if (logFile !== undefined) {
      try {
        text += readFileSync(join(dir, logFile), 'utf8');
      } catch {
        // Not written yet.
      }
    }
    return text;
  };
  for (const port of ports) await listening(port, child, log);
  return {
    dir,
    close: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * nginx in the foreground, one process, everything it writes under its own directory. `http`
 * is the body of the configuration's `http` block.
 */
export function startNginx(http: string, ports: number[]): Promise<Proxy> {
  return start(
    'nginx',
    (dir) => ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')],
    (dir) => `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http}
}
`,
    'nginx.conf',
    ports,
    'error.log',
  );
}

/** HAProxy in the foreground (`-db`) with a whole configuration (a documented file, say). */
export function startHaproxyWith(config: string, ports: number[]): Promise<Proxy> {
  return start('haproxy', (dir) => ['-db', '-f', join(dir, 'haproxy.cfg')], () => config, 'haproxy.cfg', ports);
}

/**
 * HAProxy in the foreground (`-db`); `config` is everything after its global and defaults, and
 * `global` more lines of the global section (a stats socket, say).
 */
export function startHaproxy(config: string, ports: number[], global = ''): Promise<Proxy> {
  return start(
    'haproxy',
    (dir) => ['-db', '-f', join(dir, 'haproxy.cfg')],
    () => `global
  maxconn 256
${global}
defaults
  timeout connect 2s
  timeout client 10s
  timeout server 10s
${config}
`,
    'haproxy.cfg',
    ports,
  );
}
