/**
 * The format of a store on Redis (`<prefix>qg:format`): a command that only reads writes nothing, a
 * command that writes marks an unmarked store, a store of a newer format is refused in one line by
 * every command, and `quota-guard migrate` marks a store 0.2.0 wrote (whose layout is this
 * release's) and says so.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cli, configFile, expectOneLine, quietCli } from '../cli/helpers.js';
import { keysUnder } from '../harness/redis.js';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(() => {
  redis?.disconnect();
});
quietCli();

let n = 0;
/** A config on a prefix of its own, and that prefix. */
function store(): { config: string; prefix: string } {
  const prefix = `${inject('keyPrefix')}format${n++}:`;
  const config = configFile(
    `store: { url: "${inject('redisUrl')}", keyPrefix: "${prefix}" }\ncredentials:\n  - id: main\n    apiKeyEnv: QG_FORMAT_KEY\n`,
  );
  return { config, prefix };
}

describe('the Redis store’s format key', () => {
  it('is written by a command that writes, never by one that reads, and never expires', async () => {
    const { config, prefix } = store();
    expect((await cli('status', '--config', config)).code).toBe(0);
    expect((await cli('history', '--config', config)).code).toBe(0);
    expect(await keysUnder(redis, prefix)).toEqual([]);
    expect((await cli('spend', 'main', '--cost', '2', '--config', config)).code).toBe(0);
    expect(await redis.get(`${prefix}qg:format`)).toBe('1');
    expect(await redis.pttl(`${prefix}qg:format`)).toBe(-1);
  });

  it('refuses a store of a newer format, or a key it cannot read, in one line (exit 70)', async () => {
    for (const [value, says] of [
      [
        '2',
        /is of format 2, newer than this quota-guard understands \(1\); upgrade quota-guard \(QG_STORE_CORRUPT\)$/,
      ],
      ['soon', /its format key '.*qg:format' holds data this quota-guard cannot read \(QG_STORE_CORRUPT\)$/],
    ] as const) {
      const { config, prefix } = store();
      await redis.set(`${prefix}qg:format`, value);
      for (const args of [['status'], ['history'], ['spend', 'main', '--cost', '1'], ['migrate']]) {
        const r = await cli(...args, '--config', config);
        expect(r.code, args[0]).toBe(70);
        expectOneLine(r.stderr, says);
      }
      expect(await keysUnder(redis, prefix)).toEqual([`${prefix}qg:format`]);
    }
  });

  it('quota-guard migrate marks a store 0.2.0 wrote, and says so; --dry-run writes nothing', async () => {
    const { config, prefix } = store();
    expect((await cli('spend', 'main', '--cost', '2', '--config', config)).code).toBe(0);
    await redis.del(`${prefix}qg:format`); // as 0.2.0 left it
    const dry = await cli('migrate', '--dry-run', '--config', config);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^ledger redis:\/\/.* \(key prefix '.*'\): would take 1 step \(format 1\)$/m);
    expect(dry.stdout).toContain(
      `  1: mark the store with its format (key '${prefix}qg:format' = 1); no other key changes`,
    );
    expect(await redis.exists(`${prefix}qg:format`)).toBe(0);
    const done = await cli('migrate', '--json', '--config', config);
    expect(JSON.parse(done.stdout)).toMatchObject({
      dryRun: false,
      stores: [{ store: 'ledger', kind: 'redis', format: 'format', from: 1, to: 1 }, { store: 'cache' }],
    });
    expect(await redis.get(`${prefix}qg:format`)).toBe('1');
    expect((await cli('migrate', '--config', config)).stdout).toMatch(
      /^ledger .*: format 1, current: nothing to do$/m,
    );
    // The spend of before is still there.
    const status = JSON.parse((await cli('status', '--json', '--config', config)).stdout) as {
      credentials: Array<{ buckets: Array<{ used: number }> }>;
    };
    expect(status.credentials[0]!.buckets[0]!.used).toBe(2);
  });
});
