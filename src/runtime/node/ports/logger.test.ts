// flushAndExit: the process exits only once the log's last write has completed. sonic-boom's
// flush(cb) calls back at once while a write is still in flight (minLength 0), which dropped the
// "stopped" line after a clean SIGTERM now and then; whether a write is in flight at that moment
// is a race no real peer produces on demand, so the destination here is a stand-in, named so, with
// sonic-boom's own signals: `_writing` while a write is out, `drain` when it has completed.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, flushAndExit } from './logger.js';

class StandInSonicBoom extends EventEmitter {
  _writing = true;
  written: string[] = [];
  flushSync = () => undefined;
  write(line: string): boolean {
    this.written.push(line);
    return true;
  }
}

describe('flushAndExit', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('with a write in flight, exits when it has completed (drain), not before', () => {
    vi.useFakeTimers();
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const stream = new StandInSonicBoom();
    const logger = createLogger('info', stream);
    logger.info({}, 'stopped');
    flushAndExit(logger, 0);
    expect(exit).not.toHaveBeenCalled();
    stream._writing = false;
    stream.emit('drain');
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(0);
    // The grace timer later does not exit a second time.
    vi.advanceTimersByTime(2_000);
    expect(exit).toHaveBeenCalledTimes(1);
    expect(stream.written.join('')).toContain('"msg":"stopped"');
  });

  it('with a write that never completes (a pipe nobody reads), exits after the grace anyway', () => {
    vi.useFakeTimers();
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const stream = new StandInSonicBoom();
    const logger = createLogger('info', stream);
    flushAndExit(logger, 3);
    vi.advanceTimersByTime(999);
    expect(exit).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(exit).toHaveBeenCalledWith(3);
  });
});
