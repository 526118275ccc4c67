// Whether a speed test's figure differs between IPv4 and IPv6 by more than the runs themselves
// moved (`netdiag speedtest --both`). A figure is a mean over its window; the window's one-second
// averages (windowSpread, the steady rule's measure) say how far the rate itself wandered while it
// was measured. Two figures are told apart only when each lies outside the other run's spread:
// a gap smaller than what either run moved by on its own is no difference the test can show.
import { windowSpread, type DirectionMeasure } from './working.js';

export interface FamilyDifference {
  /** Each family's figure and its spread (lowest and highest one-second average in its window), bits per second. */
  ipv4: { bps: number; lowBps: number; highBps: number };
  ipv6: { bps: number; lowBps: number; highBps: number };
  /** Each figure lies outside the other run's spread. */
  beyondSpread: boolean;
}

const outside = (bps: number, spread: { lowBps: number; highBps: number }) => bps < spread.lowBps || bps > spread.highBps;

/** The two families' figures of one direction, compared; undefined when either was not measured. */
export function familyDifference(ipv4: DirectionMeasure | undefined, ipv6: DirectionMeasure | undefined): FamilyDifference | undefined {
  const figure = (m: DirectionMeasure | undefined) => {
    const spread = m === undefined ? undefined : windowSpread(m);
    const bps = m?.sustained?.bps;
    return spread === undefined || bps === undefined ? undefined : { bps, ...spread };
  };
  const four = figure(ipv4);
  const six = figure(ipv6);
  if (four === undefined || six === undefined) return undefined;
  return { ipv4: four, ipv6: six, beyondSpread: outside(four.bps, six) && outside(six.bps, four) };
}
