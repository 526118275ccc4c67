// When the command line's packet-loss count is the network's (src/cli/speedtest/turn/relay-loss.ts): not when
// this computer failed to send some of the datagrams or dropped some that came back, which the
// count would otherwise take for lost on the way.
import { describe, expect, it } from 'vitest';
import { lossUntrustedHere } from '../../src/cli/speedtest/turn/relay-loss.js';

describe("whether the CLI's packet-loss count is the network's", () => {
  it('is, when every send succeeded and the kernel dropped nothing here (or cannot tell, off Linux)', () => {
    expect(lossUntrustedHere({ sent: 1000, notSent: {}, droppedHere: 0 })).toBeUndefined();
    expect(lossUntrustedHere({ sent: 1000, notSent: {}, droppedHere: undefined })).toBeUndefined();
  });

  it('is not, and says why, for sends that failed or datagrams dropped at the socket', () => {
    expect(lossUntrustedHere({ sent: 1000, notSent: { ENOBUFS: 30, EAGAIN: 7 }, droppedHere: 0 })).toBe(
      '37 of the 1000 datagrams could not be sent from this computer (EAGAIN, ENOBUFS), so the count would take them for the network\'s',
    );
    expect(lossUntrustedHere({ sent: 1000, notSent: {}, droppedHere: 12 })).toBe(
      "12 that came back were dropped by this computer before the client read them (its socket's receive buffer was full), so the count would take them for the network's",
    );
    expect(lossUntrustedHere({ sent: 1000, notSent: { ENOBUFS: 1 }, droppedHere: 2 })).toMatch(/^1 of the 1000 .*; 2 that came back/);
  });
});
