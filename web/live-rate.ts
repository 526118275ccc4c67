// The live rate: the rate of the window the running direction would be measured over if it
// ended now, read from what it counted so far (web/working-load.ts) by the rules that give its
// figure (src/common/speedtest/working.ts measureDirection): while the rate settles, the last
// window's length of the counts; once steady, the steady stretch. So the line shows what is being
// measured, and at the direction's end it is the figure. No DOM here, so it is unit-tested on its
// own (test/page-live.test.ts).
export { liveBps } from '../src/common/speedtest/working.js';
