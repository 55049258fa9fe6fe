import { describe, expect, it } from 'vitest';
import { childLogger, defaultLogger, deferredLogger, type Logger } from '../src/logger.js';

describe('loggers', () => {
  it('makes the real logger at the first line written, once', () => {
    const lines: string[] = [];
    let made = 0;
    const log = deferredLogger(() => {
      made++;
      return { info: (_o, m) => lines.push(`info ${m}`), warn: (_o, m) => lines.push(`warn ${m}`) } as Logger;
    });
    expect(made).toBe(0);
    log.warn({}, 'a');
    log.info({}, 'b');
    log.debug?.({}, 'c (the real logger has no debug: skipped)');
    expect(made).toBe(1);
    expect(lines).toEqual(['warn a', 'info b']);
  });

  it('is silent by default in the library, and refuses an unknown LOG_LEVEL at once', () => {
    const silent = defaultLogger({});
    expect(() => silent.warn({ x: 1 }, 'never written')).not.toThrow();
    expect(() => defaultLogger({ LOG_LEVEL: 'loud' })).toThrow(/loud/);
    expect(() => defaultLogger({ LOG_LEVEL: 'error' })).not.toThrow();
  });
});

describe('child loggers', () => {
  it('put the bindings on every line, through the logger’s own child or a wrapper', () => {
    const lines: object[] = [];
    const plain: Logger = { info: (o) => lines.push(o), warn: (o) => lines.push(o) };
    const run = childLogger(plain, { job: 'trending:US', credential: 'a' });
    run.info({ page: 1 }, 'page');
    childLogger(run, { page: 2 }).warn({}, 'again');
    expect(lines).toEqual([
      { job: 'trending:US', credential: 'a', page: 1 },
      { job: 'trending:US', credential: 'a', page: 2 },
    ]);
  });
});
