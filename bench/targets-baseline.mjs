// The bare baseline for the speed-test targets: node:http moving the same bytes with nothing
// else (the same 256 KiB zero chunk written on drain for a download, an upload read and
// dropped), so the benchmark prices what netdiag adds per gigabyte. Prints its port.
import { createServer } from 'node:http';

const CHUNK = new Uint8Array(256 * 1024);

const server = createServer((req, res) => {
  if (req.method === 'POST') {
    req.on('data', () => undefined);
    req.on('end', () => res.writeHead(200, { 'Content-Length': '0' }).end());
    return;
  }
  const bytes = Number(new URL(req.url, 'http://x').searchParams.get('bytes'));
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes) });
  let left = bytes;
  const pump = () => {
    while (left > 0) {
      const n = Math.min(left, CHUNK.byteLength);
      left -= n;
      if (!res.write(n === CHUNK.byteLength ? CHUNK : CHUNK.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
