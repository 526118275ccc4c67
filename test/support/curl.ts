// curl as the text answers' users run it: one request, its status, headers and body parsed from
// `curl -i` output, for the contract check and the assertions.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Observed } from './contract.js';

const run = promisify(execFile);

export interface CurlReply extends Observed {
  text: string;
}

/**
 * Runs `curl -sS -g -i [args] url` and parses the answer. `-g` keeps `[::1]` literal; the last
 * header block is taken, so a `100 Continue` or a proxy's block never hides the answer.
 */
export async function curl(url: string, args: string[] = []): Promise<CurlReply> {
  const { stdout } = await run('curl', ['-sS', '-g', '-i', '-m', '10', ...args, url], { encoding: 'utf8' });
  const cut = stdout.indexOf('\r\n\r\n');
  const head = stdout.slice(0, cut).split('\r\n');
  const text = stdout.slice(cut + 4);
  const status = Number(/^HTTP\/[0-9.]+ ([0-9]{3})/.exec(head[0] ?? '')?.[1]);
  const headers = new Headers();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const json = (headers.get('content-type') ?? '').includes('json') && text !== '';
  return { status, headers, text, body: json ? (JSON.parse(text) as unknown) : text === '' ? null : text };
}

/**
 * Many requests at once from one `curl --parallel` process: the status of each, in the order they
 * finished. One process, not one per request: spawning hundreds from a test blocks the test's own
 * event loop (360 spawns took 11 s here), and with it a server running in the same process.
 */
export async function curlParallel(requests: readonly { url: string; args?: string[] }[]): Promise<number[]> {
  const operations = requests.flatMap((r, i) => [...(i === 0 ? [] : ['--next']), '-sS', '-g', '-m', '20', '-o', '/dev/null', '-w', '%{http_code}\\n', ...(r.args ?? []), r.url]);
  const { stdout } = await run('curl', ['--parallel', '--parallel-immediate', '--parallel-max', String(Math.min(requests.length, 300)), ...operations], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').map(Number);
}
