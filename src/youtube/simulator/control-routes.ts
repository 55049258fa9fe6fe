/**
 * The simulator's control API under `/_sim/`, for tests and drills that run the simulator in
 * another process. JSON in, JSON out; never metered, never logged as API requests.
 *
 *   GET    /_sim/stats                      usage per project and bucket, counters, sockets, faults
 *   GET    /_sim/requests?since=SEQ&limit=N the request log after SEQ
 *   GET    /_sim/charged?project=P&bucket=B units charged since start
 *   GET    /_sim/faults                     current fault settings
 *   POST   /_sim/faults        {latencyMs, latencyJitterMs, errorRate, resetRate, hangRate}
 *   DELETE /_sim/faults                     no faults
 *   POST   /_sim/faults/next   {kind: error|reset|hang, count}
 *   POST   /_sim/faults/rate-limit {count, retryAfterSec?, status?: 403|429, reason?}
 *   POST   /_sim/spend-behind  {project, bucket?: units, units}
 *   GET    /_sim/clock                      {now, dayStart, nextResetAt}
 *   POST   /_sim/clock         {set: epoch ms | ISO date} or {advance: ms}
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { InvalidArgumentError, isQuotaGuardError } from '../../errors.js';
import { readJson } from './body.js';
import { FAULT_KINDS, type FaultKind } from './faults.js';
import type { Simulator } from './types.js';

const SpendBehindSchema = z.strictObject({
  project: z.string().min(1),
  bucket: z.string().min(1).optional(),
  units: z.number().int().min(1),
});
const NextSchema = z.strictObject({
  kind: z.enum(FAULT_KINDS as [FaultKind, ...FaultKind[]]),
  count: z.number().int().min(1).optional(),
});
const ClockSchema = z.union([
  z.strictObject({ set: z.union([z.number(), z.string().min(1)]) }),
  z.strictObject({ advance: z.number() }),
]);

function reply(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': String(body.length),
  });
  res.end(body);
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new InvalidArgumentError(i?.path.join('.') || 'body', i?.message ?? 'invalid');
  }
  return r.data;
}

function clockState(sim: Simulator) {
  const stats = sim.stats();
  return { now: stats.now, dayStart: stats.day.start, nextResetAt: stats.day.nextResetAt };
}

async function dispatch(
  sim: Simulator,
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
): Promise<[number, unknown]> {
  const route = `${req.method ?? 'GET'} ${path.replace(/\/+$/, '') || '/'}`;
  switch (route) {
    case 'GET /stats':
      return [200, sim.stats()];
    case 'GET /requests': {
      const since = Number(query.get('since') ?? 0) || 0;
      const limit = Math.min(100_000, Math.max(1, Number(query.get('limit') ?? 10_000) || 10_000));
      const all = sim.requests;
      const out = all.filter((e) => e.seq > since).slice(0, limit);
      return [200, { requests: out, last: all.length ? all[all.length - 1]?.seq : 0 }];
    }
    case 'GET /charged': {
      const filter: { project?: string; bucket?: string } = {};
      const project = query.get('project');
      const bucket = query.get('bucket');
      if (project) filter.project = project;
      if (bucket) filter.bucket = bucket;
      return [200, { units: sim.charged(filter) }];
    }
    case 'GET /faults':
      return [200, sim.faults.state()];
    case 'POST /faults':
      return [200, sim.faults.set((await readJson(req)) as never)];
    case 'DELETE /faults':
      return [200, sim.faults.clear()];
    case 'POST /faults/next': {
      const b = parse(NextSchema, await readJson(req));
      return [200, sim.faults.next(b.kind, b.count ?? 1)];
    }
    case 'POST /faults/rate-limit':
      return [200, sim.faults.rateLimitBurst((await readJson(req)) as never)];
    case 'POST /spend-behind': {
      const b = parse(SpendBehindSchema, await readJson(req));
      const bucket = b.bucket ?? sim.profile.defaultBucket;
      sim.spendBehind(b.project, bucket, b.units);
      return [200, { project: b.project, bucket, usage: sim.usage(b.project, bucket) }];
    }
    case 'GET /clock':
      return [200, clockState(sim)];
    case 'POST /clock': {
      const b = parse(ClockSchema, await readJson(req));
      if ('set' in b) {
        const ms = typeof b.set === 'number' ? b.set : Date.parse(b.set);
        if (!Number.isFinite(ms))
          throw new InvalidArgumentError('set', 'must be epoch ms or an ISO-8601 date');
        sim.clock.set(ms);
      } else {
        sim.clock.advance(b.advance);
      }
      return [200, clockState(sim)];
    }
    default:
      return [404, { error: { code: 'QG_INVALID_ARGUMENT', message: `no control route ${route}` } }];
  }
}

export function handleControl(
  sim: Simulator,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): void {
  dispatch(sim, req, path, query).then(
    ([status, value]) => reply(res, status, value),
    (e: unknown) => {
      if (res.headersSent || res.destroyed) return;
      if (isQuotaGuardError(e)) reply(res, 400, { error: { code: e.code, message: e.message } });
      else
        reply(res, 500, {
          error: { code: 'QG_INTERNAL', message: e instanceof Error ? e.message : String(e) },
        });
    },
  );
}
