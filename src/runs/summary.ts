/**
 * A finished run's summary for the run history: what the run did, and what its credential's
 * buckets hold afterwards. It lives with the job run, so the run history stays a plain store.
 */
import type { Config, CredentialConfig } from '../config/types.js';
import { bucketWindow } from '../guard/keys.js';
import type { RunSummary } from '../history/types.js';
import type { Ledger } from '../ledger/types.js';
import type { JobResult } from './types.js';

/** Units used in each of the credential's buckets now (their current windows). */
async function bucketsUsed(
  ledger: Ledger,
  credential: CredentialConfig,
  nowMs: number,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const b of Object.values(credential.buckets)) {
    const w = bucketWindow(credential, b, nowMs);
    out[b.id] = (await ledger.peek({ key: w.key, windowMs: w.windowMs })).used;
  }
  return out;
}

/**
 * What a credential's buckets hold after a run that finished at `finishedAt` (their windows then):
 * nothing when the credential is not configured or the ledger does not answer.
 */
export async function usedAfter(
  config: Config,
  ledger: Ledger,
  credentialId: string,
  finishedAt: number,
): Promise<Record<string, number>> {
  const credential = config.credentials.find((c) => c.id === credentialId);
  if (!credential) return {};
  return bucketsUsed(ledger, credential, finishedAt).catch(() => ({}));
}

/** The summary of a finished run, with what its credential's buckets hold afterwards. */
export async function summarise(r: JobResult, config: Config, ledger: Ledger): Promise<RunSummary> {
  const used = await usedAfter(config, ledger, r.credential, r.finishedAt);
  return {
    credential: r.credential,
    job: r.job,
    labels: r.labels,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    outcome: r.outcome,
    pages: r.pages,
    units: r.units,
    items: r.items,
    reason: r.reason ?? null,
    used,
  };
}
