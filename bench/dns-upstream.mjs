// A local DNS upstream for the benchmark: answers every A query over UDP with one address
// and every PTR query with one host name. A names under `miss.` get TTL 0, so the service must
// ask again each time (the cache-miss route); others get TTL 300 (the cached route).
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

const socket = createSocket('udp4');
socket.on('message', (message, rinfo) => {
  const query = dnsPacket.decode(message);
  const question = query.questions[0];
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
  socket.send(reply, rinfo.port, rinfo.address);
});
socket.bind(0, '127.0.0.1', () => {
  process.stdout.write(`${socket.address().port}\n`);
});
process.on('SIGTERM', () => {
  socket.close();
  process.exit(0);
});
