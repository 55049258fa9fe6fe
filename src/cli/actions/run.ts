/** `quota-guard run`: the action (its options are declared in src/cli/commands/run.ts). */

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
      ...(http && opts.decisions
        ? { decisions: opts.tokens !== undefined ? { tokensFile: opts.tokens } : {} }
        : {}),
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
