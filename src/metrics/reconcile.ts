/**
 * The reconcile's metrics: the figures of each project's last successful reconcile, per credential
 * of the project and bucket (read from the run history at scrape time, so a `serve` shows what a
 * `run` or a cron `quota-guard reconcile` on another host did), its age, and the reconciles of this
 * process that failed, by cause.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import type { RunHistory } from '../history/types.js';
import type { ReconcileResult } from '../reconcile/reconciler.js';
import { lastReconciles } from '../reconcile/runs.js';

export class ReconcileMetrics {
  readonly upstream: Gauge<'credential' | 'project' | 'bucket'>;
  readonly ledger: Gauge<'credential' | 'project' | 'bucket'>;
  readonly outside: Gauge<'credential' | 'project' | 'bucket'>;
  readonly ledgerAbove: Gauge<'credential' | 'project' | 'bucket'>;
  readonly lastSuccess: Gauge<'project'>;
  readonly age: Gauge<'project'>;
  readonly errors: Counter<'project' | 'code'>;

  constructor(registry: Registry, prefix: string) {
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Gauge<L>({ name: `${prefix}${name}`, help, labelNames, registers: [registry] });
    const figures = ['credential', 'project', 'bucket'] as const;
    this.upstream = gauge(
      'reconcile_upstream_units',
      'The upstream’s own count (Cloud Monitoring) of the bucket from its midnight to the last minute the last successful reconcile compared',
      figures,
    );
    this.ledger = gauge(
      'reconcile_ledger_units',
      'What the ledger holds of the bucket over the same minutes: its own spend plus the outside spend',
      figures,
    );
    this.outside = gauge(
      'reconcile_outside_units',
      'Outside spend (units the upstream counted that did not go through the ledger) recorded since the upstream’s midnight',
      figures,
    );
    this.ledgerAbove = gauge(
      'reconcile_ledger_above_units',
      'Units the ledger holds above the upstream’s count over the same minutes (spends recorded that the upstream did not charge)',
      figures,
    );
    this.lastSuccess = gauge(
      'reconcile_last_success_timestamp_seconds',
      'When the project’s last successful reconcile ended (any host), from the run history; absent when never',
      ['project'],
    );
    this.age = gauge(
      'reconcile_age_seconds',
      'Seconds since the project’s last successful reconcile ended (any host); absent when never',
      ['project'],
    );
    this.errors = new Counter({
      name: `${prefix}reconcile_errors_total`,
      help: 'Reconciles of this process that failed, by project and cause (the QG_* code)',
      labelNames: ['project', 'code'],
      registers: [registry],
    });
  }

  /** Count a reconcile's failures. */
  reconciled(r: ReconcileResult): void {
    for (const p of r.projects) if (!p.ok) this.errors.inc({ project: p.project, code: p.error.code });
  }

  /** Read the last reconciles from the history (gauges absent when it does not answer). */
  async refresh(config: Pick<Config, 'credentials'>, history: RunHistory, nowMs: number): Promise<void> {
    const last = await lastReconciles(config, history).catch(() => undefined);
    for (const g of [this.upstream, this.ledger, this.outside, this.ledgerAbove, this.lastSuccess, this.age])
      g.reset();
    for (const p of last ?? []) {
      if (!p.success) continue;
      this.lastSuccess.set({ project: p.project }, p.success.at / 1000);
      this.age.set({ project: p.project }, Math.max(0, (nowMs - p.success.at) / 1000));
      for (const credential of p.credentials)
        for (const b of p.success.buckets) {
          const labels = { credential, project: p.project, bucket: b.bucket };
          this.upstream.set(labels, b.upstream);
          this.ledger.set(labels, b.own + b.outside);
          this.outside.set(labels, b.outside);
          this.ledgerAbove.set(labels, b.ledgerAbove);
        }
    }
  }
}
