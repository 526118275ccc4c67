// Coverage feedback from V8's own block coverage, through the inspector of this process, so no
// instrumentation or build is needed: Profiler.startPreciseCoverage with callCount false (one bit
// per block, reset by each take) and detailed true (blocks, not only functions). An input is worth
// keeping when it runs a block no input ran before.
//
// V8 reports, per function that ran, its ranges with a count, the innermost range deciding a
// position's count, and drops a block whose count equals its parent's. So "block B ran" is read
// as: the innermost range of this take that contains B has a count. Each range V8 has ever
// reported inside a function is remembered as a block of it, and asked again on later takes.
import { Session } from 'node:inspector';

interface Range {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface ScriptCoverage {
  url: string;
  functions: { ranges: Range[] }[];
}

/** Whose code counts: the parsers and their libraries, not the fuzzer's machinery or Node's. */
const counted = (url: string): boolean => url.startsWith('file:') && !/\/node_modules\/(?:fast-check|pure-rand|vitest|@vitest)\//.test(url) && !/\/fuzz\/(?!targets\/)/.test(url);

export class Coverage {
  readonly #session = new Session();
  /** Every block seen, as `url:start-end`, by function (`url:start`). */
  readonly #blocks = new Map<string, Set<string>>();
  /** Every block some input ran. */
  readonly #covered = new Set<string>();

  constructor() {
    this.#session.connect();
    this.#post('Profiler.enable');
    this.#post('Profiler.startPreciseCoverage', { callCount: false, detailed: true });
  }

  /** The inspector answers an in-process session synchronously, so its callback has run when post returns. */
  #post(method: string, params?: object): unknown {
    const answer: { error: Error | null; result: unknown } = { error: null, result: undefined };
    this.#session.post(method, params, (error, result) => {
      answer.error = error;
      answer.result = result;
    });
    if (answer.error !== null) throw answer.error;
    return answer.result;
  }

  /** The blocks that ran since the last take and that no input had run before (not yet added). */
  take(): Set<string> {
    const { result } = this.#post('Profiler.takePreciseCoverage') as { result: ScriptCoverage[] };
    const fresh = new Set<string>();
    for (const script of result) {
      if (!counted(script.url)) continue;
      for (const { ranges } of script.functions) {
        const whole = ranges[0];
        if (whole === undefined) continue;
        const fn = `${script.url}:${String(whole.startOffset)}`;
        let blocks = this.#blocks.get(fn);
        if (blocks === undefined) this.#blocks.set(fn, (blocks = new Set()));
        for (const r of ranges) blocks.add(`${String(r.startOffset)}-${String(r.endOffset)}`);
        // A function that did not run is known (for summary's count of blocks seen), not covered.
        if (whole.count === 0) continue;
        for (const block of blocks) {
          const [start = 0, end = 0] = block.split('-').map(Number);
          // The innermost reported range holding the block: the shortest one that contains it.
          let innermost = whole;
          for (const r of ranges) {
            if (r.startOffset <= start && end <= r.endOffset && r.endOffset - r.startOffset < innermost.endOffset - innermost.startOffset) innermost = r;
          }
          const key = `${script.url}:${block}`;
          if (innermost.count > 0 && !this.#covered.has(key)) fresh.add(key);
        }
      }
    }
    return fresh;
  }

  add(blocks: Iterable<string>): void {
    for (const block of blocks) this.#covered.add(block);
  }

  /**
   * How many blocks some input ran, and how many ranges V8 reported at all, in all and by file
   * (path relative to `root`), over the files where some block ran. `seen` is not the source's
   * block count: a function that never ran is one range, and a range reported apart in one take
   * and merged into a larger one in another counts apart. A trend between runs, not a share.
   */
  summary(root: string): { covered: number; seen: number; byFile: Map<string, { covered: number; seen: number }> } {
    const byFile = new Map<string, { covered: number; seen: number }>();
    const tally = (key: string, field: 'covered' | 'seen') => {
      const file = key.slice(0, key.lastIndexOf(':')).replace(`file://${root}/`, '');
      const counts = byFile.get(file) ?? { covered: 0, seen: 0 };
      counts[field]++;
      byFile.set(file, counts);
    };
    const seen = new Set<string>();
    for (const [fn, blocks] of this.#blocks) for (const block of blocks) seen.add(`${fn.slice(0, fn.lastIndexOf(':'))}:${block}`);
    for (const key of seen) tally(key, 'seen');
    for (const key of this.#covered) tally(key, 'covered');
    // Files none of whose blocks ran (modules loaded for another target) are left out.
    for (const [file, counts] of byFile) if (counts.covered === 0) byFile.delete(file);
    const files = [...byFile.values()];
    return { covered: this.#covered.size, seen: files.reduce((n, c) => n + c.seen, 0), byFile };
  }

  /** Forgets every block, for the next target (one session per process: a second one after a stop reads less). */
  reset(): void {
    this.take();
    this.#blocks.clear();
    this.#covered.clear();
  }

  close(): void {
    this.#post('Profiler.stopPreciseCoverage');
    this.#session.disconnect();
  }
}
