// A local analytics collector for the benchmark: `accept` answers every NDJSON POST with 204
// after reading it; `hang` reads it and never answers (the sink's timeout must cope); `flaky`
// hangs on every other POST and answers the rest.
import { createServer } from 'node:http';

const mode = process.argv[2] ?? 'accept';
let events = 0;
let posts = 0;
const server = createServer((req, res) => {
  posts += 1;
  const hang = mode === 'hang' || (mode === 'flaky' && posts % 2 === 0);
  // Lines counted with the native search, not byte by byte in JS: the collector shares the
  // machine's two cores with the service under test and should take as little of them as it can.
  req.on('data', (chunk) => {
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) events += 1;
  });
  req.on('end', () => {
    if (hang) return;
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  // On stdout, where the benchmark reads it to compare with the events the service accepted.
  process.stdout.write(`collector (${mode}) received ${events} events\n`);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
