// The baseline: a bare node:http server answering every request with a fixed JSON body of the
// size given (the size of the route under test), so the ratio isolates netdiag's own cost.
import { createServer } from 'node:http';

const size = Number(process.argv[2] ?? 200);
const body = Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, size - 10)) }).slice(0, size));
const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
