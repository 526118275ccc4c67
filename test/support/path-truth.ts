// The truth of one path of a multipath (test/support/multipath.ts), measured from its client
// namespace by test/support/link-truth.ts's own code: a child Node process in that namespace runs
// measureLinkTruth (bulk transfers over four connections, counted every 100 ms; ping idle and
// beside each) against the server's address on that path, which the client reaches over that
// path alone, and prints the truth as JSON. The upload's counting sink runs in the server
// namespace, listening on that address. Node runs link-truth.ts as it is (type stripping): it
// imports only Node's modules and types.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startUploadSink, type LinkTruth } from './link-truth.js';
import type { Multipath, Path } from './multipath.js';
import type { DirectionShape, ShapedLink } from './shaped-link.js';

const LINK_TRUTH = fileURLToPath(new URL('./link-truth.ts', import.meta.url));

/** The child: argv is the base URL, the sink's host and port, the shape (JSON) and the address to ping. */
const CHILD = String.raw`
const [base, sinkHost, sinkPort, shape, serverAddress, module] = process.argv.slice(1);
const { measureLinkTruth } = await import(module);
const truth = await measureLinkTruth({ serverAddress }, base, { host: sinkHost, port: Number(sinkPort) }, JSON.parse(shape));
process.stdout.write(JSON.stringify(truth));
`;

/** A URL's host for an address: IPv6 in brackets. */
export const urlHost = (address: string): string => (address.includes(':') ? `[${address}]` : address);

/** The truth of `path` as shaped (`shape`), the deployment listening on port 8080 of every server address. */
export async function measurePathTruth(net: Multipath, path: Path, shape: { down: DirectionShape; up: DirectionShape }): Promise<LinkTruth> {
  // startUploadSink reads only where the server runs and its address: a shaped link's, here this path's.
  const sink = await startUploadSink({ inServer: (command: string[]) => net.inServer(command), serverAddress: path.serverAddress } as ShapedLink);
  try {
    const base = `http://${urlHost(path.serverAddress)}:8080`;
    const [command, ...args] = net.inClient([process.execPath, '--experimental-strip-types', '--no-warnings', '--input-type=module', '-e', CHILD, base, sink.host, String(sink.port), JSON.stringify(shape), path.serverAddress, LINK_TRUTH]);
    const child = spawn(command ?? 'ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) throw new Error(`the truth of path ${path.name} failed (exit ${String(code)}): ${err.slice(0, 500)}`);
    return JSON.parse(out) as LinkTruth;
  } finally {
    await sink.stop();
  }
}
