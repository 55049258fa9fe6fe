/**
 * Who may use the decision API: bearer tokens from a file the operator keeps (never the command
 * line, never the config). The file holds each token's SHA-256, not the token; a presented token is
 * hashed and compared with every entry in constant time (`timingSafeEqual`), so neither the file
 * nor the comparison gives a token away. The file is read again when it changes (checked at most
 * once a second), without a restart; a change that does not parse, or a file that is gone, keeps
 * the tokens in force and is logged once. Tokens are never logged, only their names.
 *
 * ```yaml
 * tokens:
 *   - name: php-cron              # shown in metrics, logs and spend tags
 *     sha256: 9f86d08…            # printf %s "$TOKEN" | sha256sum
 *     credentials: [default]      # or ['*']
 *     tiers: [scheduled]          # of scheduled, backfill, manual
 *     mayBlock: true              # may report an exhausted quota (blocks the bucket for everyone)
 * ```
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import * as z from 'zod/mini';
import '../zod-mini.js';
import { TIERS, type Tier } from '../config/types.js';
import { parseYaml } from '../config/yaml.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface ApiClient {
  /** The token's name (`local` without a tokens file, on loopback). */
  name: string;
  /** Credential ids it may spend, or `*`. */
  credentials: readonly string[];
  tiers: readonly Tier[];
  /** May report an exhausted quota, which blocks a bucket for every job. */
  mayBlock: boolean;
}

interface TokenEntry extends ApiClient {
  hash: Buffer;
}

/** Who calls without a tokens file: only served on loopback. */
export const LOCAL_CLIENT: ApiClient = { name: 'local', credentials: ['*'], tiers: TIERS, mayBlock: true };

/** Whether the client's token may use the credential. */
export function mayUse(client: ApiClient, credential: string): boolean {
  return client.credentials.includes('*') || client.credentials.includes(credential);
}

const NAME = /^[A-Za-z0-9_.-]{1,40}$/;
/** The stamp of a tokens file that cannot be looked at (removed, or its directory unreadable). */
const MISSING = 'missing';

function problem(file: string, what: string): ConfigError {
  return new ConfigError([`tokens file '${file}': ${what}`], 'QG_CONFIG_INVALID', { field: '--tokens' });
}

/** One entry of the file; any other key is a mistake (a misspelt `mayBlock` would otherwise grant nothing, silently). */
const TokenSchema = z.strictObject({
  name: z.string().check(z.regex(NAME)),
  sha256: z.string().check(z.regex(/^[0-9a-fA-F]{64}$/)),
  credentials: z.array(z.string()).check(z.minLength(1)),
  tiers: z.optional(z.array(z.enum(TIERS))),
  mayBlock: z.optional(z.boolean()),
});

/** What each field must be, as the file's mistakes say it (never the value: it may be a token). */
const MUST: Readonly<Record<string, string>> = {
  name: 'must be 1-40 characters of A-Z a-z 0-9 _ . -',
  sha256: "must be the token's SHA-256 in hex (64 characters)",
  credentials: "must be a list of credential ids (or ['*'])",
  tiers: `must be a list of ${TIERS.join(', ')}`,
  mayBlock: 'must be true or false',
};

function entryProblem(file: string, at: string, issue: z.core.$ZodIssue): ConfigError {
  if (issue.code === 'unrecognized_keys') {
    return problem(
      file,
      `${at}: '${String(issue.keys[0]).slice(0, 40)}' is not a field of a token (${Object.keys(MUST).join(', ')})`,
    );
  }
  const field = String(issue.path[0] ?? '');
  return problem(file, field ? `${at}.${field} ${MUST[field] ?? 'is not valid'}` : `${at} must be a mapping`);
}

/**
 * The file's tokens; throws a ConfigError naming the entry and field at fault (never a token). With
 * `known`, the credential ids a token names must be among them (or `*`).
 */
export function parseTokens(file: string, text: string, known?: readonly string[]): TokenEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    throw problem(file, 'is not valid YAML or JSON');
  }
  const list =
    typeof doc === 'object' && doc !== null && Object.hasOwn(doc, 'tokens')
      ? (doc as { tokens: unknown }).tokens
      : undefined;
  if (!Array.isArray(list)) throw problem(file, 'must have a `tokens:` list');
  const names = new Set<string>();
  const credentials = known === undefined ? undefined : new Set(known);
  return list.map((raw, i) => {
    const at = `tokens[${i}]`;
    const r = TokenSchema.safeParse(raw);
    if (!r.success) throw entryProblem(file, at, r.error.issues[0]!);
    const t = r.data;
    if (names.has(t.name)) throw problem(file, `${at}.name '${t.name}' appears twice`);
    names.add(t.name);
    const unknown = credentials && t.credentials.find((c) => c !== '*' && !credentials.has(c));
    if (unknown !== undefined && credentials) {
      throw problem(
        file,
        `${at}.credentials: unknown credential '${unknown.slice(0, 100)}' (configured: ${[...credentials].join(', ')})`,
      );
    }
    return {
      name: t.name,
      hash: Buffer.from(t.sha256, 'hex'),
      credentials: t.credentials,
      tiers: t.tiers ?? ['scheduled'],
      mayBlock: t.mayBlock === true,
    };
  });
}

export function sha256(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export class TokenFile {
  readonly #file: string;
  readonly #known: readonly string[] | undefined;
  #logger: Logger | undefined;
  #entries: TokenEntry[];
  #stamp: string;
  #checkedAt = 0;

  /**
   * Reads the file now: a missing or malformed file, or one naming a credential not among `known`
   * (the config's), is a ConfigError (exit 78).
   */
  constructor(file: string, logger?: Logger, known?: readonly string[]) {
    this.#file = file;
    this.#known = known;
    this.#logger = logger;
    this.#stamp = this.#stat();
    this.#entries = this.#read();
  }

  /** Where to log the file's later reads (for a file read before the logger existed). */
  logTo(logger: Logger | undefined): void {
    this.#logger = logger;
  }

  get size(): number {
    return this.#entries.length;
  }

  #stat(): string {
    try {
      const s = statSync(this.#file);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      throw problem(this.#file, 'cannot be read');
    }
  }

  #read(): TokenEntry[] {
    let text: string;
    try {
      text = readFileSync(this.#file, 'utf8');
    } catch {
      throw problem(this.#file, 'cannot be read');
    }
    return parseTokens(this.#file, text, this.#known);
  }

  /** Re-read when the file changed (looked at most once a second). */
  #refresh(): void {
    const now = Date.now();
    if (now - this.#checkedAt < 1000) return;
    this.#checkedAt = now;
    let stamp: string;
    try {
      stamp = this.#stat();
    } catch (e) {
      // Removed or unreadable: said once, as a change that cannot be used; read again when back.
      stamp = MISSING;
      if (stamp !== this.#stamp) this.#unusable(e);
      this.#stamp = stamp;
      return;
    }
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    try {
      this.#entries = this.#read();
      this.#logger?.info({ tokens: this.#entries.map((e) => e.name) }, 'tokens file read again');
    } catch (e) {
      this.#unusable(e);
    }
  }

  #unusable(e: unknown): void {
    this.#logger?.error?.(
      { error: (e as Error).message },
      'tokens file changed but cannot be used; the previous tokens stay in force',
    );
  }

  /** Forget when the file was last looked at (tests, and a reload signal). */
  recheck(): void {
    this.#checkedAt = 0;
  }

  /** The client a bearer token belongs to, or undefined. Every entry is compared, in constant time. */
  authenticate(token: string): ApiClient | undefined {
    this.#refresh();
    const h = sha256(token);
    let found: TokenEntry | undefined;
    for (const e of this.#entries) {
      if (timingSafeEqual(h, e.hash) && !found) found = e;
    }
    return found;
  }
}
