/**
 * Every error quota-guard throws is a QuotaGuardError with a stable `code`.
 * Match on `code`, never on `message` or `instanceof` across package copies.
 *
 * Denials (budget says no) are values, not errors: see `Decision` in ledger/types.ts.
 * Errors are for misuse (bad input), outages (store or upstream unreachable) and bugs.
 *
 * Each code maps to a process exit code (sysexits.h) so the CLI and cron wrappers can act on it.
 * Documented in docs/errors.md; a test keeps the two in sync.
 */
export const ExitCode = {
  OK: 0,
  /** EX_USAGE: the command line was wrong. */
  USAGE: 64,
  /** EX_DATAERR: input data was wrong (e.g. a plan that does not fit). */
  DATAERR: 65,
  /** EX_NOINPUT: a store a read-only command reads does not exist. */
  NOINPUT: 66,
  /** EX_UNAVAILABLE: the upstream or a store was unavailable. */
  UNAVAILABLE: 69,
  /** EX_SOFTWARE: an internal error (a bug). */
  SOFTWARE: 70,
  /** EX_TEMPFAIL: stopped early because the budget said so; try again later. */
  TEMPFAIL: 75,
  /** EX_CONFIG: configuration error (bad file, missing API key variable, unknown name). */
  CONFIG: 78,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The core's codes → exit code. Adding a code means adding it here (the type enforces it) and to
 * docs/errors.md. An application built on the core keeps its own codes with it and registers them
 * (`registerErrorCodes`): the YouTube application's are in src/youtube/errors.ts.
 */
export const ERROR_CODES = {
  // Input and usage
  QG_INVALID_ARGUMENT: ExitCode.USAGE,
  QG_COST_EXCEEDS_LIMIT: ExitCode.USAGE,
  QG_WINDOW_MISMATCH: ExitCode.USAGE,
  QG_CROSS_SLOT: ExitCode.USAGE,
  QG_ENTRY_CONFLICT: ExitCode.USAGE,
  QG_ENTRY_UNKNOWN: ExitCode.NOINPUT,
  QG_STORE_URL_INVALID: ExitCode.CONFIG,
  // Configuration
  QG_CONFIG_INVALID: ExitCode.CONFIG,
  QG_MISSING_API_KEY: ExitCode.CONFIG,
  QG_UNKNOWN_CREDENTIAL: ExitCode.CONFIG,
  QG_UNKNOWN_METHOD: ExitCode.CONFIG,
  QG_UNKNOWN_BUCKET: ExitCode.CONFIG,
  // Stores
  QG_STORE_UNAVAILABLE: ExitCode.UNAVAILABLE,
  QG_STORE_CORRUPT: ExitCode.SOFTWARE,
  QG_STORE_FOREIGN: ExitCode.CONFIG,
  QG_STORE_NOT_FOUND: ExitCode.NOINPUT,
  QG_STORE_OUTDATED: ExitCode.CONFIG,
  // Listening
  QG_ADDRESS_IN_USE: ExitCode.UNAVAILABLE,
  // Upstream
  QG_UPSTREAM_QUOTA_EXCEEDED: ExitCode.TEMPFAIL,
  QG_UPSTREAM_RATE_LIMITED: ExitCode.TEMPFAIL,
  QG_UPSTREAM_KEY_INVALID: ExitCode.CONFIG,
  QG_UPSTREAM_FORBIDDEN: ExitCode.CONFIG,
  QG_UPSTREAM_BAD_REQUEST: ExitCode.SOFTWARE,
  QG_UPSTREAM_NOT_FOUND: ExitCode.SOFTWARE,
  QG_UPSTREAM_SERVER_ERROR: ExitCode.UNAVAILABLE,
  QG_UPSTREAM_BAD_RESPONSE: ExitCode.UNAVAILABLE,
  QG_UPSTREAM_TRANSPORT: ExitCode.UNAVAILABLE,
  QG_STOPPED: ExitCode.TEMPFAIL,
  QG_UPSTREAM_DEADLINE: ExitCode.UNAVAILABLE,
  QG_UPSTREAM_TOO_LARGE: ExitCode.UNAVAILABLE,
  // The upstream's own count (reconcile)
  QG_RECONCILE_AUTH: ExitCode.CONFIG,
  QG_RECONCILE_FORBIDDEN: ExitCode.CONFIG,
  QG_RECONCILE_PROJECT: ExitCode.CONFIG,
  // Anything else
  QG_INTERNAL: ExitCode.SOFTWARE,
} as const satisfies Record<string, ExitCode>;

/**
 * The codes applications register, by name (declaration merging: an application's module adds its
 * own, e.g. `declare module 'quota-guard' { interface ApplicationErrorCodes { QG_MINE: true } }`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by the applications' declarations.
export interface ApplicationErrorCodes {}

export type ErrorCode = keyof typeof ERROR_CODES | keyof ApplicationErrorCodes;

/** Every code known in this process, the core's and the registered applications', → exit code. */
const EXIT_CODES = new Map<string, ExitCode>(Object.entries(ERROR_CODES));

/**
 * Register an application's codes with their exit codes (done by the application's module when it
 * is loaded). A code of the core's cannot be given another exit code.
 */
export function registerErrorCodes(codes: Readonly<Record<string, ExitCode>>): void {
  for (const [code, exit] of Object.entries(codes)) {
    if (Object.hasOwn(ERROR_CODES, code) && ERROR_CODES[code as keyof typeof ERROR_CODES] !== exit) {
      throw new Error(
        `error code ${code} is the core's, with exit code ${ERROR_CODES[code as keyof typeof ERROR_CODES]}`,
      );
    }
    EXIT_CODES.set(code, exit);
  }
}

/** The exit code of a code (70 for a code no one registered). */
function exitCodeOfCode(code: string): ExitCode {
  return EXIT_CODES.get(code) ?? ExitCode.SOFTWARE;
}

export interface QuotaGuardErrorOptions {
  cause?: unknown;
  /** The input field the error is about, e.g. `budgets[0].limit` or `credentials[0].reserve`. */
  field?: string;
  /** Free-form details safe to log (never secrets). */
  details?: Record<string, unknown>;
}

export class QuotaGuardError extends Error {
  override name = 'QuotaGuardError';
  readonly code: ErrorCode;
  readonly field?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: QuotaGuardErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.field !== undefined) this.field = options.field;
    if (options.details !== undefined) this.details = options.details;
  }

  get exitCode(): ExitCode {
    return exitCodeOfCode(this.code);
  }
}

/** Bad input from a caller: the message names the field. */
export class InvalidArgumentError extends QuotaGuardError {
  override name = 'InvalidArgumentError';
  constructor(field: string, problem: string, options: Omit<QuotaGuardErrorOptions, 'field'> = {}) {
    super('QG_INVALID_ARGUMENT', `${field}: ${problem}`, { ...options, field });
  }
}

/** A spend whose cost can never fit under a budget's limit. */
export class CostExceedsLimitError extends QuotaGuardError {
  override name = 'CostExceedsLimitError';
  constructor(message: string, options: QuotaGuardErrorOptions = {}) {
    super('QG_COST_EXCEEDS_LIMIT', message, options);
  }
}

/**
 * A spend sent to Redis whose answer never came (a command timeout, or the connection lost while it
 * was in flight): Redis may still apply it, for example when a paused server wakes up. The
 * `StoreUnavailableError` of that spend carries it; `Ledger.settle` finds out what became of it once
 * the store answers again.
 */
export interface UnsettledSpend {
  /** The entry id the spend would have stored. */
  id: string;
  keys: string[];
  cost: number;
  /** The longest window of its budgets: past it the entry no longer counts, settled or not. */
  windowMs: number;
}

/** The ledger store (Redis or SQLite) could not be reached or timed out. Fail-open/closed applies. */
export class StoreUnavailableError extends QuotaGuardError {
  override name = 'StoreUnavailableError';
  /** Set on a spend that was sent but not answered: the store may still apply it (see `Ledger.settle`). */
  unsettled?: UnsettledSpend;
  constructor(message: string, options: QuotaGuardErrorOptions = {}) {
    super('QG_STORE_UNAVAILABLE', message, options);
  }
}

/** A configuration problem: one entry per problem, each with its path. */
export class ConfigError extends QuotaGuardError {
  override name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(
    problems: readonly string[],
    code: ErrorCode = 'QG_CONFIG_INVALID',
    options: QuotaGuardErrorOptions = {},
  ) {
    super(code, problems.join('\n'), options);
    this.problems = problems;
  }
}

export function isQuotaGuardError(e: unknown): e is QuotaGuardError {
  return (
    e instanceof QuotaGuardError ||
    (typeof e === 'object' &&
      e !== null &&
      typeof (e as { code?: unknown }).code === 'string' &&
      EXIT_CODES.has((e as { code: string }).code))
  );
}

/** The exit code a process should end with for this error (70 for anything that is not ours). */
export function exitCodeFor(e: unknown): ExitCode {
  if (isQuotaGuardError(e)) return exitCodeOfCode(e.code);
  return ExitCode.SOFTWARE;
}
