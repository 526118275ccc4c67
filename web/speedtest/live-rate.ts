// The live rate: the rate of the window the running direction is being measured over, read from
// what it counted so far (src/common/speedtest/load-loop.ts) by liveBps in src/common/speedtest/working.ts,
// beside the rules that give its figure, so at the direction's end it reads as the figure does
// (unit-tested there and in test/page/live.test.ts).
export { liveBps } from '../../src/common/speedtest/working.js';
