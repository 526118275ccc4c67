/**
 * An indicative bufferbloat grade from how much latency grows while the line is busy (the loaded
 * latency less the idle one), on Waveform's scale: A+ under 5 ms added, A under 30, B under 60,
 * C under 200, D under 400, F above. A large queue in a router or modem (bufferbloat) is what
 * makes a call stutter or a game lag while someone else downloads; the idle latency hides it.
 * Pure, so the page and the command line grade alike.
 */
type BufferbloatGrade = 'A+' | 'A' | 'B' | 'C' | 'D' | 'F';

const BANDS: readonly [number, BufferbloatGrade, string][] = [
  [5, 'A+', 'a busy line does not disturb calls or games'],
  [30, 'A', 'a busy line barely disturbs calls and games'],
  [60, 'B', 'a busy line may make calls and fast games stutter a little'],
  [200, 'C', 'a busy line makes calls lag and games hard to play'],
  [400, 'D', 'a busy line makes calls and games very hard'],
];

interface Bufferbloat {
  /** Added latency under load, in ms (never below 0). */
  increaseMs: number;
  grade: BufferbloatGrade;
  /** What the grade means for calls and games, in words. */
  meaning: string;
}

/** The grade, or undefined when either latency was not measured. */
export function bufferbloat(idleMs: number | undefined, loadedMs: number | undefined): Bufferbloat | undefined {
  if (idleMs === undefined || loadedMs === undefined) return undefined;
  const increaseMs = Math.max(0, loadedMs - idleMs);
  const band = BANDS.find(([below]) => increaseMs < below);
  return band === undefined
    ? { increaseMs, grade: 'F', meaning: 'a busy line makes calls and games unusable' }
    : { increaseMs, grade: band[1], meaning: band[2] };
}

/**
 * The worse direction's latency under load, as the speed-test library's loaded-latency increase takes it;
 * undefined when neither direction has one.
 */
export function worseLoaded(downMs: number | undefined, upMs: number | undefined): number | undefined {
  return downMs === undefined && upMs === undefined ? undefined : Math.max(downMs ?? -Infinity, upMs ?? -Infinity);
}
