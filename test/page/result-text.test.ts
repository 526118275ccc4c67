// The page's plain rules for a finished speed test (web/speedtest/result-text.ts): the spread of round trips,
// what a missing figure says, and when the browser itself is named as the likely limit.
import { describe, expect, it } from 'vitest';
import { axisScale, BROWSER_LIMIT_BPS, browserLimitNote, classesWaitFor, LOSS_MAX_WAITING, lossUntrusted, noLoadedLatency, spread, stepLossCounts, verdictLine, type LossSending } from '../../web/speedtest/result-text.js';

describe('the spread of round trips', () => {
  it('is min, median, p90 by the closest ranks, and the mean step between consecutive samples', () => {
    // Sorted 1, 2, 3, 4, 10: median the third; p90 at rank 3.6, 4 + 0.6 × 6 = 7.6.
    // Steps in the order taken (4, 1, 10, 2, 3): 3, 9, 8, 1, mean 5.25.
    const s = spread([4, 1, 10, 2, 3]);
    expect(s).toMatchObject({ count: 5, min: 1, median: 3, jitter: 5.25 });
    expect(s?.p90).toBeCloseTo(7.6, 9);
  });

  it('has no jitter with one sample, and is undefined with none (not zero)', () => {
    expect(spread([7])).toEqual({ count: 1, min: 7, median: 7, p90: 7, jitter: null });
    expect(spread([])).toBeUndefined();
  });
});

describe('what a missing figure says', () => {
  it('loaded latency: no round trip was timed while the link was loaded', () => {
    expect(noLoadedLatency()).toBe('no round trip was timed while the link was loaded');
  });

  it('the classes say what they wait for, and nothing once all three are known', () => {
    expect(classesWaitFor({ streaming: 'good', gaming: 'great', videoCall: 'poor' }, true, true, 'full')).toBeUndefined();
    expect(classesWaitFor({}, true, false, 'light')).toBe('each waits for the latency under load, which this test could not take (the full test may)');
    expect(classesWaitFor({}, true, false, 'full')).toBe('each waits for the latency under load, which this test could not take');
    expect(classesWaitFor({}, false, false, 'light')).toBe('each waits for the idle latency, which was not measured');
  });
});

describe('the browser as the limit', () => {
  it('is named from the threshold up, with the faster direction and the command to run instead', () => {
    expect(browserLimitNote(BROWSER_LIMIT_BPS - 1, 10e6, { measured: 'https://192.0.2.1:8080', page: 'https://192.0.2.1:8080' }, '/client/netdiag-client.tgz', true)).toBeUndefined();
    expect(browserLimitNote(undefined, undefined, { measured: 'https://192.0.2.1:8080', page: 'https://192.0.2.1:8080' }, '/client/netdiag-client.tgz', true)).toBeUndefined();
    const note = browserLimitNote(20e6, 1.2e9, { measured: 'https://192.0.2.1:8080', page: 'https://192.0.2.1:8080' }, '/client/netdiag-client.tgz', true);
    expect(note?.text).toMatch(/^At 1,200\u00a0Mbit\/s your browser may be what limits the result rather than your connection/);
    // About the person's browser, not about a test machine of ours.
    expect(note?.text).not.toMatch(/netdiag's test machine|loopback/);
    // Installed from this server: no registry has a package by that name.
    expect(note?.command).toBe('npm install -g https://192.0.2.1:8080/client/netdiag-client.tgz && netdiag speedtest --url https://192.0.2.1:8080');
  });

  it('names the server the result was measured against, the client installed from this page\'s origin', () => {
    const note = browserLimitNote(1.2e9, 10e6, { measured: 'https://fra.example.test', page: 'https://192.0.2.1:8080' }, '/client/netdiag-client.tgz', true);
    expect(note?.command).toBe('npm install -g https://192.0.2.1:8080/client/netdiag-client.tgz && netdiag speedtest --url https://fra.example.test');
    expect(browserLimitNote(1.2e9, 10e6, { measured: 'https://fra.example.test', page: 'https://192.0.2.1:8080' }, undefined, true)?.command).toBe('netdiag speedtest --url https://fra.example.test');
  });

  it('names no install command where the server serves no client package (Workers)', () => {
    expect(browserLimitNote(1.2e9, 10e6, { measured: 'https://example.test', page: 'https://example.test' }, undefined, true)?.command).toBe('netdiag speedtest --url https://example.test');
  });

  it('names no install command over plain HTTP (not a secure context): anyone on the path could swap the package', () => {
    expect(browserLimitNote(1.2e9, 10e6, { measured: 'http://192.0.2.1:8080', page: 'http://192.0.2.1:8080' }, '/client/netdiag-client.tgz', false)?.command).toBe('netdiag speedtest --url http://192.0.2.1:8080');
  });
});

describe('the chart\'s y axis', () => {
  // The step is the first of 1, 2 or 5 times a power of ten at or above a quarter of the top bar
  // (so at most four intervals); the top, the first multiple of it at or above the bar.
  it.each([
    [19.2, 5, 20],
    [191, 50, 200],
    [0.4, 0.1, 0.4],
    [4106, 2000, 6000],
  ])('for a top bar of %s Mbit/s steps by %s up to %s', (max, step, top) => {
    const scale = axisScale(max);
    expect(scale.step).toBeCloseTo(step, 9);
    expect(scale.top).toBeCloseTo(top, 9);
    expect(scale.top).toBeGreaterThanOrEqual(max);
  });
});

/** What the watch saw: messages and the most waiting, and the step's datagrams when the browser counted them. */
const seen = (maxWaiting: number, datagrams?: { sent: number; received: number }): LossSending => ({ messages: 1000, maxWaiting, datagrams: datagrams?.sent, received: datagrams?.received });

describe("whether the packet-loss figure is the network's", () => {
  it('is, counted in datagrams at both ends, however the browser packed the messages (up to 442 waited under load)', () => {
    expect(lossUntrusted(seen(442, { sent: 581, received: 533 }), 48)).toBeUndefined();
    expect(lossUntrusted(seen(9, { sent: 1074, received: 970 }), 104)).toBeUndefined();
  });

  it('is, counted in messages, when the browser sent one to a datagram at the pace (as Chromium did sending well: at most 9-29 waiting)', () => {
    expect(lossUntrusted(seen(29), 97)).toBeUndefined();
    expect(lossUntrusted(seen(LOSS_MAX_WAITING), 97)).toBeUndefined();
    // None lost is none lost, however packed: no datagram that carried a message was lost.
    expect(lossUntrusted(seen(119), 0)).toBeUndefined();
  });

  it('is not, counted in messages, and says why, when messages waited in the browser (430 did under load)', () => {
    expect(lossUntrusted(seen(LOSS_MAX_WAITING + 1), 97)).toBe(
      "the browser could not send at the step's pace: up to 51 of its 1,000 messages waited in the browser at once and left packed together, so one datagram lost took many",
    );
    expect(lossUntrusted(seen(430), 97)).toMatch(/^the browser could not send at the step's pace: up to 430 of its 1,000/);
    // A count of datagrams at one end only is no count of their loss: the messages' rule holds.
    expect(lossUntrusted({ messages: 1000, maxWaiting: 430, datagrams: 700, received: undefined }, 97)).toMatch(/^the browser could not send/);
  });
});

describe("the packet-loss step's counts", () => {
  it('are the datagrams when the browser counted both ends: sent, and sent less received', () => {
    expect(stepLossCounts({ numMessagesSent: 1000, lostMessages: Array.from({ length: 176 }, (_, i) => i + 1) }, seen(506, { sent: 634, received: 572 }))).toEqual({ sent: 634, lost: 62 });
  });

  it('are never below none lost: a datagram of the opening may arrive inside the step (1002 sent, 1004 received)', () => {
    expect(stepLossCounts({ numMessagesSent: 1000, lostMessages: [] }, seen(9, { sent: 1002, received: 1004 }))).toEqual({ sent: 1002, lost: 0 });
  });

  it("count the browser's own sends without datagram counts: the last batch lost whole is lost, not left out (the engine's copy read 107 of 990)", () => {
    // The engine's copy from its last returned message: 990 sent, 107 of them lost, so 883 came
    // back; the browser sent 1000, so 117 were lost.
    const engineCopy = { numMessagesSent: 990, lostMessages: Array.from({ length: 107 }, (_, i) => i + 1) };
    expect(stepLossCounts(engineCopy, seen(9))).toEqual({ sent: 1000, lost: 117 });
  });

  it("agree with the engine's when its copy saw every send", () => {
    expect(stepLossCounts({ numMessagesSent: 1000, lostMessages: [3, 9] }, seen(9))).toEqual({ sent: 1000, lost: 2 });
  });

  it('are every send lost when none came back (the engine kept no copy), and nothing when nothing was sent', () => {
    expect(stepLossCounts(undefined, seen(9))).toEqual({ sent: 1000, lost: 1000 });
    expect(stepLossCounts(undefined, { messages: 0, maxWaiting: 0, datagrams: undefined, received: undefined })).toEqual({ sent: 0, lost: 0 });
  });

  it("are the engine's when the page did not see the sends", () => {
    expect(stepLossCounts({ numMessagesSent: 990, lostMessages: [1] }, undefined)).toEqual({ sent: 990, lost: 1 });
  });
});

describe('the verdict line above the figures', () => {
  it('says what the connection is good for when every class is known', () => {
    expect(verdictLine({ streaming: 'great', videoCall: 'good', gaming: 'great' }, { grade: 'A', increaseMs: 12 })).toBe('Good for streaming video, video calls and online games.');
  });

  it('names what is poor, and the latency under load as the cause when it is one', () => {
    expect(verdictLine({ streaming: 'great', videoCall: 'poor', gaming: 'bad' }, { grade: 'D', increaseMs: 240 })).toBe(
      'Good for streaming video; poor for video calls and online games: latency grows by 240\u00a0ms while the line is busy (bufferbloat D).',
    );
    expect(verdictLine({ streaming: 'average', videoCall: 'good', gaming: 'poor' }, { grade: 'A', increaseMs: 8 })).toBe('Good for video calls; fair for streaming video; poor for online games.');
  });

  it('without the classes, says only a lag that is there, or nothing', () => {
    expect(verdictLine({}, { grade: 'C', increaseMs: 120 })).toBe('Latency grows by 120\u00a0ms while the line is busy (bufferbloat C): calls and games will lag whenever something else uses the connection.');
    expect(verdictLine({}, { grade: 'A+', increaseMs: 2 })).toBeUndefined();
    expect(verdictLine({ streaming: 'great' }, undefined)).toBeUndefined();
  });
});
