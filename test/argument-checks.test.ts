import { describe, expect, it } from 'vitest';
import { positiveInt, positiveIntOption } from '../src/argument-checks.js';
import { openCache } from '../src/youtube/cache/index.js';
import { createYouTubeClient } from '../src/youtube/upstream/index.js';

describe('argument checks', () => {
  it('positiveInt names the field and the value it got', () => {
    expect(positiveInt('cost', 3)).toBe(3);
    expect(() => positiveInt('cost', 0)).toThrow('cost: must be an integer >= 1, got 0');
    expect(() => positiveInt('cost', 1.5)).toThrow('cost: must be an integer >= 1, got 1.5');
    expect(() => positiveInt('cost', '2')).toThrow("cost: must be an integer >= 1, got '2'");
    expect(() => positiveInt('windowMs', 11, 10)).toThrow('windowMs: must be at most 10, got 11');
  });

  it('positiveIntOption falls back only when the option is not given', () => {
    expect(positiveIntOption('n', undefined, 7)).toBe(7);
    expect(positiveIntOption('n', 2, 7)).toBe(2);
    expect(() => positiveIntOption('n', 0, 7)).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field: 'n' }),
    );
  });

  it('the upstream client and the cache check their options the same way', () => {
    expect(() => createYouTubeClient({ apiKey: 'k', connections: 0 })).toThrow(
      expect.objectContaining({
        code: 'QG_INVALID_ARGUMENT',
        field: 'connections',
        message: 'connections: must be an integer >= 1, got 0',
      }),
    );
    expect(() => openCache(':memory:', { hotSize: 2_000_000 })).toThrow(
      expect.objectContaining({
        code: 'QG_INVALID_ARGUMENT',
        field: 'options.hotSize',
        message: 'options.hotSize: must be at most 1000000, got 2000000',
      }),
    );
  });
});
