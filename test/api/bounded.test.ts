/**
 * What clients write cannot grow what `serve` shows without bound, nor drive the reader's screen:
 * through real `serve --decisions` processes over SQLite and Redis, one token records 2,000 runs
 * with 2,000 job names, hostile reasons and job names full of control and bidirectional
 * characters, and reports an exhausted quota with such a reason. `/metrics` keeps the first job
 * names per credential and folds the rest into `job="other"` (counted), the page stays small, and
 * no control or bidi character reaches the page.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MAX_JOB_LABELS } from '../../src/metrics/metrics.js';
import { MAX_CHART_RUN_POINTS } from '../../src/metrics/page.js';
import { tmpPath } from '../job-library/helpers.js';
import { ApiClient, type Served, startServe, tokensFile, writeConfig } from './helpers.js';

const NAMES = 2_000;
/** The bidi controls (embeddings, overrides, isolates, marks): the API takes them in one-line text. */
const BIDI = '\u202e\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d\u200e\u200f\u061c';
/** ESC (a screen-clearing sequence) and BEL: a report's reason may carry them. */
const HOSTILE = `\u001b[2J\u0007${BIDI}`;
/** Control characters (but the page's own line breaks) and bidi controls in `text`. */
function unsafe(text: string): string[] {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0)!;
    return (
      (c < 0x20 && c !== 0x0a) ||
      (c >= 0x7f && c <= 0x9f) ||
      c === 0x061c ||
      c === 0x200e ||
      c === 0x200f ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    );
  });
}

describe.each(['sqlite', 'redis'] as const)('serve on %s', (kind) => {
  let served: Served | undefined;
  let client: ApiClient | undefined;
  afterAll(async () => {
    await client?.close();
    await served?.stop();
  });

  it('keeps /metrics and the page bounded under 2,000 job names, and shows no control or bidi character', async () => {
    const cred = `b${randomBytes(4).toString('hex')}`;
    const t = tokensFile([{ name: 'noisy', credentials: [cred], mayBlock: true }]);
    served = await startServe(
      writeConfig({
        store: kind === 'redis' ? inject('redisUrl') : `sqlite:${tmpPath('bounded.db')}`,
        credentials: [{ id: cred }],
      }),
      ['--tokens', t.file],
    );
    client = new ApiClient(served.url, t.secrets['noisy']);
    const c = client;
    const now = Date.now();
    for (let i = 0; i < NAMES; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          c.call('POST', '/v1/runs', {
            credential: cred,
            id: `run-${i + j}`,
            job: `job${i + j}${(i + j) % 100 === 0 ? BIDI : ''}`,
            startedAt: now - 60_000 + i + j,
            finishedAt: now - 30_000 + i + j,
            outcome: 'stopped',
            reason: `stopped ${BIDI} here`,
          }),
        ),
      ).then((answers) => {
        for (const a of answers) expect(a.status).toBe(200);
      });
    }
    const spent = await c.spend({
      credential: cred,
      method: 'videos.list',
      entry: 'block-1',
      tag: `tag${BIDI}`,
    });
    expect(spent.status).toBe(200);
    const blocked = await c.report({
      credential: cred,
      entry: 'block-1',
      outcome: 'exhausted',
      reason: `quota ${HOSTILE} gone`,
    });
    expect(blocked.status).toBe(200);

    const metrics = await (await fetch(`${served.url}/metrics`)).text();
    const series = metrics.split('\n').filter((l) => l.startsWith('quota_guard_recorded_job_runs_total{'));
    const jobs = new Set(series.map((l) => /job="([^"]*)"/.exec(l)![1]));
    // The application's own two, the first MAX_JOB_LABELS of the client's, and `other`.
    expect(jobs.size).toBe(2 + MAX_JOB_LABELS + 1);
    expect(metrics).toContain(
      `quota_guard_recorded_job_names_folded{credential="${cred}"} ${NAMES - MAX_JOB_LABELS}`,
    );
    expect(metrics).toMatch(
      new RegExp(
        `quota_guard_recorded_job_runs_total\\{credential="${cred}",job="other",outcome="stopped"\\} ${NAMES - MAX_JOB_LABELS}\\n`,
      ),
    );
    expect(Buffer.byteLength(metrics)).toBeLessThan(60_000);

    const page = await (await fetch(`${served.url}/`)).text();
    expect(Buffer.byteLength(page)).toBeLessThan(250_000);
    for (const chart of page.split('<svg class="chart"').slice(1)) {
      expect([...chart.matchAll(/data-kind="run"/g)].length).toBeLessThanOrEqual(MAX_CHART_RUN_POINTS);
    }
    expect(unsafe(page)).toEqual([]);
    // What the client wrote is still there, its controls replaced as the CLI replaces them.
    expect(page).toContain('quota \uFFFD[2J\uFFFD');
    expect(page).toContain('(reported by noisy)');
  }, 120_000);
});
