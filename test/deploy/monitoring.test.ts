/**
 * The deployable monitoring: the alert rules pass their unit tests under `promtool test rules`
 * (skipped with a printed reason only where promtool is not installed; CI installs it), and every
 * metric the alerts and the Grafana dashboard query is one the exporter really serves.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createMetrics } from '../../src/metrics/metrics.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';

const execFileP = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yml');
const ALERT_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/quota-guard.json');

const PROMTOOL = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!PROMTOOL)
  console.warn(
    'promtool test rules skipped: promtool is not on PATH (Debian: apt-get install -y prometheus; .ci/run installs it)',
  );

/** Every series name the exporter serves (a histogram's _bucket, _sum and _count included). */
async function servedNames(): Promise<Set<string>> {
  const metrics = createMetrics({ config: parseConfig({ store: 'sqlite::memory:' }) });
  const text = await metrics.registry.metrics();
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m;
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
    else names.add(name!);
  }
  return names;
}

const metricNames = (expr: string): string[] => [...new Set(expr.match(/\bquota_guard_[a-z0-9_]+\b/g) ?? [])];

interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}

/** The anchors of docs/operations.md's headings, as a Markdown renderer makes them. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('alert rules', () => {
  const rules = (
    YAML.parse(readFileSync(ALERTS, 'utf8')) as { groups: Array<{ rules: Rule[] }> }
  ).groups.flatMap((g) => g.rules);

  it.skipIf(!PROMTOOL)('pass promtool check rules and their unit tests (promtool test rules)', async () => {
    const check = await execFileP('promtool', ['check', 'rules', ALERTS]);
    expect(check.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    const test = await execFileP('promtool', ['test', 'rules', ALERT_TESTS]);
    expect(test.stdout).toContain('SUCCESS');
    // Every alert is exercised by at least one unit test.
    const tested = readFileSync(ALERT_TESTS, 'utf8');
    for (const r of rules) expect(tested, r.alert).toContain(`alertname: ${r.alert}`);
  });

  it('each say what to do: a summary, a description and a runbook section of docs/operations.md; a value rounded', () => {
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const known = anchors(docs);
    for (const r of rules) {
      const a = r.annotations ?? {};
      expect(Object.keys(a).sort(), r.alert).toEqual(['description', 'runbook_url', 'summary']);
      expect(a['description']!.length, r.alert).toBeGreaterThan(a['summary']!.length);
      const m = /^docs\/operations\.md#([a-z0-9-]+)$/.exec(a['runbook_url']!);
      expect(m, `${r.alert}: ${a['runbook_url']}`).not.toBeNull();
      expect(known, `${r.alert}: #${m![1]} is no heading of docs/operations.md`).toContain(m![1]);
      // The section is the alert's own: its heading names it.
      expect(m![1], r.alert).toBe(r.alert.toLowerCase());
      // A value is printed as a whole number, never as increase()'s 2.0169…
      for (const text of Object.values(a))
        for (const v of text.match(/\{\{[^}]*\$value[^}]*\}\}/g) ?? [])
          expect(v, r.alert).toMatch(/\| printf "%\.0f"/);
    }
    // The blocked bucket's alert gives the command that lifts the block.
    const blocked = rules.find((r) => r.alert === 'QuotaGuardBucketBlocked');
    expect(blocked?.annotations?.['description']).toContain(
      'quota-guard unblock {{ $labels.credential }} {{ $labels.bucket }}',
    );
  });

  it('name no bucket: they hold for any profile', () => {
    for (const r of rules) expect(r.expr, r.alert).not.toMatch(/bucket\s*=/);
  });

  it('query only metrics the exporter serves, and are the ones docs/operations.md lists', async () => {
    const served = await servedNames();
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    expect(rules.length).toBeGreaterThan(5);
    for (const r of rules) {
      expect(metricNames(r.expr).length, r.alert).toBeGreaterThan(0);
      for (const name of metricNames(r.expr)) expect(served, `${r.alert}: ${name}`).toContain(name);
      expect(docs, r.alert).toContain(`\`${r.alert}\``);
    }
  });
});

describe('Grafana dashboard', () => {
  interface Panel {
    id: number;
    type: string;
    title: string;
    targets: Array<{ expr: string; refId: string }>;
    collapsed?: boolean;
    panels?: Panel[];
  }
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    uid: string;
    panels: Panel[];
    templating: { list: Array<{ name: string; query: unknown }> };
  };

  // A collapsed row holds its panels inside it.
  const rows = dashboard.panels.filter((p) => p.type === 'row');
  const panels = dashboard.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));

  it('is valid dashboard JSON whose every query names a metric the exporter serves', async () => {
    const served = await servedNames();
    expect(dashboard.uid).toBe('quota-guard');
    expect(panels.length).toBeGreaterThan(8);
    const ids = [...panels, ...rows].map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const queried = new Set<string>();
    for (const p of panels) {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        const names = metricNames(t.expr);
        expect(names.length, `${p.title} ${t.refId}`).toBeGreaterThan(0);
        for (const name of names) {
          expect(served, `${p.title}: ${name}`).toContain(name);
          queried.add(name);
        }
      }
    }
    for (const v of dashboard.templating.list)
      for (const name of metricNames(JSON.stringify(v.query)))
        expect(served, `$${v.name}: ${name}`).toContain(name);
    // The stale-regions panel's query is the one promtool tests (alerts.test.yml): 0, not "No data".
    const stale = panels.find((p) => p.title === 'Stale regions');
    expect(readFileSync(ALERT_TESTS, 'utf8')).toContain(`expr: '${stale?.targets[0]?.expr}'`);
    // The state a cron-only setup relies on is on the dashboard.
    for (const name of [
      'quota_guard_units_remaining',
      'quota_guard_bucket_blocked',
      'quota_guard_region_last_success_timestamp_seconds',
      'quota_guard_recorded_job_runs_total',
    ])
      expect(queried).toContain(name);
  });

  it('keeps the regions in a folded row of their own: a config without regions sees no empty panels', () => {
    const regional = panels.filter((p) => p.targets.some((t) => /_region_/.test(t.expr)));
    expect(regional.length).toBeGreaterThan(0);
    const row = rows.find((r) => r.title === 'Regions');
    expect(row?.collapsed).toBe(true);
    expect(row?.panels?.map((p) => p.id).sort()).toEqual(regional.map((p) => p.id).sort());
    // Nothing else queries a bucket by name.
    for (const p of panels) for (const t of p.targets) expect(t.expr, p.title).not.toMatch(/bucket\s*=/);
  });
});
