// A local DNS upstream for the benchmark: answers every A query over UDP with one address
// and every PTR query with one host name. A names under `miss.` get TTL 0, so the service must
// ask again each time (the cache-miss route); others get TTL 300 (the cached route). With
// `--doh` it answers DNS-over-HTTPS POSTs over plain HTTP on loopback instead (the Workers bench),
// with `--tcp` DNS over TCP (RFC 7766, length-prefixed, any number of queries per connection).
// With `--ptr-nxdomain` every PTR query is answered NXDOMAIN (RCODE 3, RFC 1035 4.1.1), as most
// reverse zones answer for a home address: the peer comparison's setting (echoip-peer.mjs).
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import dnsPacket from 'dns-packet';

const PTR_NXDOMAIN = process.argv.includes('--ptr-nxdomain');

function answer(message) {
  const query = dnsPacket.decode(message);
  const question = query.questions[0];
  if (PTR_NXDOMAIN && question.type === 'PTR') {
    return dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, questions: [question] });
  }
  const reply = dnsPacket.encode({
    type: 'response',
    id: query.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [question],
    answers:
      question.type === 'PTR'
        ? [{ type: 'PTR', name: question.name, ttl: 300, data: 'host.bench.test' }]
        : [{ type: 'A', name: question.name, ttl: question.name.startsWith('miss.') ? 0 : 300, data: '192.0.2.1' }],
  });
  return reply;
}

if (process.argv.includes('--doh')) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const reply = answer(Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Type': 'application/dns-message', 'Content-Length': reply.length }).end(reply);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${server.address().port}\n`);
  });
} else if (process.argv.includes('--tcp')) {
  const server = createTcpServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= buffered.readUInt16BE(0) + 2) {
        const reply = answer(buffered.subarray(2, buffered.readUInt16BE(0) + 2));
        buffered = buffered.subarray(buffered.readUInt16BE(0) + 2);
        const framed = Buffer.alloc(reply.length + 2);
        framed.writeUInt16BE(reply.length, 0);
        reply.copy(framed, 2);
        socket.write(framed);
      }
    });
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${server.address().port}\n`);
  });
} else {
  const socket = createSocket('udp4');
  socket.on('message', (message, rinfo) => {
    socket.send(answer(message), rinfo.port, rinfo.address);
  });
  socket.bind(0, '127.0.0.1', () => {
    process.stdout.write(`${socket.address().port}\n`);
  });
}
process.on('SIGTERM', () => {
  process.exit(0);
});
