import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient } from '../../src/youtube/upstream/index.js';
import { KEY } from './helpers.js';

describe('connection reuse', () => {
  it('1,000 sequential calls go over one kept-alive connection', async () => {
    const sim = await startSimulator({ keys: [KEY] });
    const client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY, connections: 4 });
    try {
      for (let i = 0; i < 1_000; i++) await client.videoCategoriesList({ regionCode: 'US' });
      expect(sim.requests.filter((r) => r.status === 200)).toHaveLength(1_000);
      expect(sim.sockets.accepted).toBeGreaterThanOrEqual(1);
      expect(sim.sockets.accepted).toBeLessThanOrEqual(2);
    } finally {
      await client.close();
      await sim.close();
    }
  }, 120_000);

  it('concurrent calls open at most `connections` sockets', async () => {
    const sim = await startSimulator({ keys: [KEY], faults: { latencyMs: 20 } });
    const client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY, connections: 3 });
    try {
      await Promise.all(Array.from({ length: 30 }, () => client.videoCategoriesList({ regionCode: 'US' })));
      expect(sim.sockets.accepted).toBe(3);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
