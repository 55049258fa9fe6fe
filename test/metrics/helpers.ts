import parsePrometheusTextFormat, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';
import { request } from 'undici';

/** GET a loopback URL: status, content type and body. */
export async function get(url: string): Promise<{ status: number; type: string; body: string }> {
  const r = await request(url, { headersTimeout: 10_000, bodyTimeout: 10_000 });
  return { status: r.statusCode, type: String(r.headers['content-type'] ?? ''), body: await r.body.text() };
}

export type Families = Map<string, MetricFamily>;

/** Scrape `/metrics` and parse it with a Prometheus text-format parser. */
export async function scrape(base: string): Promise<Families> {
  const r = await get(`${base}/metrics`);
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return new Map(parsePrometheusTextFormat(r.body).map((f) => [f.name, f]));
}

function matches(s: Sample, labels: Record<string, string>): boolean {
  return Object.entries(labels).every(([k, v]) => s.labels?.[k] === v);
}

/** The sample of `name` with these labels (undefined when absent); a histogram gives its count. */
export function sample(f: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const s = f.get(name)?.metrics.find((m) => matches(m, labels));
  if (!s) return undefined;
  return Number(s.value ?? s.count);
}
