/**
 * Starts one private redis-server and one 3-master Redis Cluster for the whole test run and
 * stops them afterwards, failures included. Tests read their URLs with `inject('redisUrl')` and
 * `inject('redisClusterUrl')`. REDIS_URL / REDIS_CLUSTER_URL point them at existing servers instead
 * (tests then write only keys under a unique prefix).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  hasRedisServer,
  INSTALL_HINT,
  type RedisCluster,
  type RedisServer,
  startRedisCluster,
  startRedisServer,
} from './harness/redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisClusterUrl: string;
    keyPrefix: string;
  }
}

let single: RedisServer | undefined;
let cluster: RedisCluster | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  // Default ledger and cache files (no path configured) go to a private data directory, never to
  // the user's own (~/.local/share/quota-guard). Workers inherit the variable.
  if (!process.env['QUOTA_GUARD_DATA']) {
    dataDir = mkdtempSync(join(tmpdir(), 'qg-data-'));
    process.env['QUOTA_GUARD_DATA'] = dataDir;
  }
  const envUrl = process.env.REDIS_URL;
  const envCluster = process.env.REDIS_CLUSTER_URL;
  if ((!envUrl || !envCluster) && !hasRedisServer()) {
    throw new Error(
      envUrl ? `${INSTALL_HINT} (the Redis Cluster tests need it, or set REDIS_CLUSTER_URL)` : INSTALL_HINT,
    );
  }
  if (!envUrl) single = await startRedisServer();
  if (!envCluster) cluster = await startRedisCluster();
  project.provide('redisUrl', envUrl ?? single!.url);
  project.provide('redisClusterUrl', envCluster ?? cluster!.url);
  project.provide('keyPrefix', `qgtest:${process.pid}:${Date.now().toString(36)}:`);
}

export async function teardown(): Promise<void> {
  await single?.stop();
  if (single) rmSync(single.dir, { recursive: true, force: true });
  await cluster?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
