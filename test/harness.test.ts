import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';

describe('test harness', () => {
  it('gives a private redis-server, never the shared 6379', async () => {
    const url = new URL(inject('redisUrl'));
    if (!process.env.REDIS_URL) expect(url.port).not.toBe('6379');
    const r = new Redis(inject('redisUrl'));
    try {
      expect(await r.ping()).toBe('PONG');
    } finally {
      r.disconnect();
    }
  });

  it('gives a 3-master cluster with every slot assigned', async () => {
    const nodes = inject('redisClusterUrl').replace('redis-cluster://', '').split(',');
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    const [host, port] = nodes[0]!.split(':');
    const r = new Redis({ host: host!, port: Number(port) });
    try {
      const info = await r.cluster('INFO');
      expect(String(info)).toMatch(/cluster_state:ok/);
      expect(String(info)).toMatch(/cluster_slots_assigned:16384/);
    } finally {
      r.disconnect();
    }
  });
});
