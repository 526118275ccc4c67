// The browser's own account of the packet-loss step's sending. The engine (@cloudflare/speedtest)
// opens its two peer connections itself and counts messages, not datagrams; a browser that falls
// behind the step's pace packs many messages into one datagram, and then one datagram lost on the
// network loses them all. The page has no handle on the engine's connections, so while the step
// may run it stands in for window.RTCPeerConnection (the engine looks the global up when it
// creates them) with a subclass that notes, at each send on a channel it creates, how much the
// channel still holds, and polls getStats() for the datagrams its transport sent. The rule that
// reads these is lossUntrusted (report.ts).
import type { LossSending } from './report.js';

const POLL_MS = 100;

export interface LossWatch {
  /** What was seen; datagrams undefined when getStats() never told. */
  sending(): LossSending;
  /** Puts the browser's own RTCPeerConnection back. */
  stop(): void;
}

/** Datagrams sent by the connection's transports (ICE, DTLS, SCTP and data all counted). */
async function datagramsSent(pc: RTCPeerConnection): Promise<number | undefined> {
  const report = await pc.getStats();
  let sent: number | undefined;
  report.forEach((s: { type?: string; packetsSent?: number }) => {
    if (s.type === 'transport' && typeof s.packetsSent === 'number') sent = (sent ?? 0) + s.packetsSent;
  });
  return sent;
}

export function watchLossStep(): LossWatch {
  const native = window.RTCPeerConnection;
  const encoder = new TextEncoder();
  /** Sizes in bytes of the messages sent, in order: bufferedAmount counts bytes, the rule messages. */
  const sizes: number[] = [];
  let maxWaiting = 0;
  let first: number | undefined;
  let last: number | undefined;
  let watching = false;

  const poll = (pc: RTCPeerConnection) => {
    if (pc.signalingState === 'closed') return;
    datagramsSent(pc).then(
      (sent) => {
        // The first answer after the first send is the base; a few of the step's own datagrams may
        // already be in it, which the rule's tolerance allows for.
        if (sent !== undefined) {
          first ??= sent;
          last = sent;
        }
        setTimeout(() => {
          poll(pc);
        }, POLL_MS);
      },
      // Closed by the engine between two polls: the last answer stands.
      () => undefined,
    );
  };

  class Watched extends native {
    override createDataChannel(label: string, init?: RTCDataChannelInit): RTCDataChannel {
      const channel = super.createDataChannel(label, init);
      // The engine's sender: the first channel created while the step may run. Its receiver's
      // channel arrives by ondatachannel and sends nothing.
      if (watching) return channel;
      watching = true;
      const send = channel.send.bind(channel) as (data: string) => void;
      channel.send = ((data: string) => {
        if (sizes.length === 0) poll(this);
        // The messages still in the browser: the most recent ones whose bytes make up bufferedAmount.
        let bytes = channel.bufferedAmount;
        let waiting = 0;
        for (let i = sizes.length - 1; i >= 0 && bytes > 0; i--, waiting++) bytes -= sizes[i] ?? 0;
        maxWaiting = Math.max(maxWaiting, waiting);
        sizes.push(encoder.encode(data).length);
        send(data);
      }) as RTCDataChannel['send'];
      return channel;
    }
  }
  window.RTCPeerConnection = Watched;

  return {
    sending: () => ({ messages: sizes.length, maxWaiting, datagrams: first === undefined || last === undefined ? undefined : last - first }),
    stop: () => {
      window.RTCPeerConnection = native;
    },
  };
}
