/**
 * The floor for `npm run bench -- api`: a bare node:http server that runs one weighted
 * sliding-log spend per request (quota-guard's own lua/spend.lua, one budget) through ioredis, and
 * nothing else: no validation, no budgets from a config, no tiers, no auth, no logging. Started as
 * its own process (as `serve` is); prints its port on stdout.
 *
 *   node --import tsx bench/api-floor.ts <redis-url>
 */
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { loadScripts } from '../src/ledger/scripts.js';

const redis = new Redis(process.argv[2]!);
const spend = loadScripts().find((s) => s.file === 'spend')!;
redis.defineCommand('floorSpend', { lua: spend.lua });
const r = redis as unknown as {
  floorSpend(n: number, log: string, meta: string, ...argv: Array<string | number>): Promise<number[]>;
};
let n = 0;
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { cost?: number };
    const cost = body.cost ?? 1;
    r.floorSpend(2, '{floor}:log', '{floor}:meta', `f${n++}:${cost}:floor`, cost, 1e12, 86_400_000).then(
      (reply) => {
        const text = JSON.stringify({ allowed: reply[0] === 1, remaining: reply[1] });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  redis.disconnect();
});
