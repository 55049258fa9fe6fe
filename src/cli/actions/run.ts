/** `quota-guard run`: the action (its options are declared in src/cli/commands/run.ts). */

import type { CallerRules, TokenFile } from '../../api/index.js';
import { InvalidArgumentError } from '../../errors.js';
import { DEFAULT_HTTP_PORT, isLoopback, parseHttpAddress } from '../../http-address.js';
import { abortOnSignals } from '../../runs/job-run.js';
import { startService } from '../../scheduler/service.js';
import type { RunOptions } from '../command-options.js';
import { openContext } from '../context.js';
import { preflight } from '../job-commands.js';

export async function run(opts: RunOptions): Promise<number | undefined> {
  const { config, credential } = await preflight(opts, () => undefined);
  const http =
    opts.http === undefined || opts.http === false
      ? undefined
      : parseHttpAddress(opts.http === true ? String(DEFAULT_HTTP_PORT) : opts.http);
  if ((opts.decisions || opts.tokens !== undefined) && !http) {
    throw new InvalidArgumentError('--decisions', 'the decision API is served on --http: add --http');
  }
  if ((opts.allowHost?.length || opts.allowOrigin?.length) && !opts.decisions) {
    throw new InvalidArgumentError('--allow-host', 'is for the decision API: add --decisions');
  }
  // Its address, its tokens file and the names it answers to, checked before anything is created.
  const decisions =
    http && opts.decisions ? await decisionsSetup(http.host, opts, config.credentials) : undefined;
  // A store that is down at start is the store-down policy's business (and /healthz says so).
  const ctx = await openContext(opts, { allowUnreachable: true, config, history: true });
  if (http && !isLoopback(http.host))
    ctx.logger.warn({ host: http.host }, 'serving /metrics and /healthz beyond loopback');
  const { signal, dispose } = abortOnSignals();
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      qg: ctx.qg,
      credential,
      backfill: opts.backfill,
      ...(http ? { http } : {}),
      ...(decisions ? { decisions } : {}),
    });
  } catch (e) {
    dispose();
    await ctx.close();
    throw e;
  }
  try {
    const why = await new Promise<string>((resolve) =>
      signal.addEventListener('abort', () => resolve('signal'), { once: true }),
    );
    await service.stop(why);
  } finally {
    dispose();
  }
  return 0;
}

async function decisionsSetup(
  host: string,
  opts: RunOptions,
  credentials: ReadonlyArray<{ id: string }>,
): Promise<{ tokens?: TokenFile; callers: CallerRules }> {
  const api = await import('../../api/index.js');
  api.checkDecisionsAddress(host, opts.tokens !== undefined);
  const callers = api.callerRules(opts.allowHost, opts.allowOrigin);
  if (opts.tokens === undefined) return { callers };
  const ids = credentials.map((c) => c.id);
  return { tokens: new api.TokenFile(opts.tokens, undefined, ids), callers };
}
