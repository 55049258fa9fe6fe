/**
 * The decision API as `serve --decisions` and `run --http --decisions` set it up: tokens from their
 * file, the rule that without tokens it serves loopback only, the host names and web origins it
 * answers beyond the defaults, and the TLS files, each checked before anything is opened.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError, InvalidArgumentError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import type { RunHistory } from '../history/types.js';
import { isLoopback } from '../http-address.js';
import type { Logger } from '../logger.js';
import { type CallerRules, hostName } from './callers.js';
import { createDecisionApi, type DecisionApi, type DecisionApiOptions } from './decisions.js';
import { TokenFile } from './tokens.js';

export interface DecisionApiSetup {
  guard: Guard;
  /** Where `POST /v1/runs` records runs. */
  history: RunHistory;
  /** The host the server listens on. */
  host: string;
  /** The tokens file (`--tokens`); required beyond loopback. */
  tokensFile?: string;
  /** Or the tokens file already read (so that a bad file is refused before the store opens). */
  tokens?: TokenFile;
  /** `--allow-host` and `--allow-origin`, read with `callerRules`. */
  callers?: CallerRules;
  logger?: Logger;
  onRequest?: DecisionApiOptions['onRequest'];
  labelsOf?: DecisionApiOptions['labelsOf'];
}

/** Refuses a decision API beyond loopback without tokens: said before anything is opened or created. */
export function checkDecisionsAddress(host: string, withTokens: boolean): void {
  if (withTokens || isLoopback(host)) return;
  throw new ConfigError(
    [
      `the decision API serves beyond loopback (${host}) only with bearer tokens: give --tokens <file> (docs/http-api.md)`,
    ],
    'QG_CONFIG_INVALID',
    { field: '--tokens' },
  );
}

/** `--allow-host` names and `--allow-origin` origins, checked (each may also be a comma-separated list). */
export function callerRules(hosts: readonly string[] = [], origins: readonly string[] = []): CallerRules {
  const split = (vs: readonly string[]) =>
    vs
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter((v) => v !== '');
  const names = split(hosts).map((h) => {
    if (!/^[A-Za-z0-9.-]{1,253}\.?$/.test(h)) {
      throw new InvalidArgumentError('--allow-host', `'${h.slice(0, 100)}' is not a host name`);
    }
    return hostName(h);
  });
  const allowed = split(origins).map((o) => {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new InvalidArgumentError(
        '--allow-origin',
        `'${o.slice(0, 100)}' is not an origin (https://host[:port])`,
      );
    }
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== o.replace(/\/$/, '')) {
      throw new InvalidArgumentError(
        '--allow-origin',
        `'${o.slice(0, 100)}' is not an origin (https://host[:port])`,
      );
    }
    return u.origin;
  });
  return { hosts: names, origins: allowed };
}

export function decisionApiFor(s: DecisionApiSetup): DecisionApi {
  checkDecisionsAddress(s.host, s.tokens !== undefined || s.tokensFile !== undefined);
  s.tokens?.logTo(s.logger);
  const tokens =
    s.tokens ??
    (s.tokensFile !== undefined
      ? new TokenFile(
          s.tokensFile,
          s.logger,
          s.guard.config.credentials.map((c) => c.id),
        )
      : undefined);
  return createDecisionApi({
    guard: s.guard,
    history: s.history,
    ...(tokens ? { tokens } : {}),
    ...(s.callers ? { callers: s.callers } : {}),
    ...(s.logger ? { logger: s.logger } : {}),
    ...(s.onRequest ? { onRequest: s.onRequest } : {}),
    ...(s.labelsOf ? { labelsOf: s.labelsOf } : {}),
  });
}

/**
 * `--tls-cert` and `--tls-key` read and tried together: a file that cannot be read, a file that is
 * not PEM, or a key that does not belong to the certificate is a ConfigError (one line, exit 78)
 * naming the file, never a stack.
 */
export function readTls(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file);
    } catch {
      throw new ConfigError([`${flag} '${file}' cannot be read`], 'QG_CONFIG_INVALID', { field: flag });
    }
  };
  const cert = read(certFile, '--tls-cert');
  const key = read(keyFile, '--tls-key');
  // Each on its own first, so that the line names the file at fault, then the two together.
  const unusable = (flag: string, file: string, what: string, tried: () => void) => {
    try {
      tried();
    } catch (e) {
      // OpenSSL's reason is the part after its last '::' (`…:PEM routines::no start line`).
      const message = String((e as Error).message);
      const at = message.lastIndexOf('::');
      const why = (at >= 0 ? message.slice(at + 2) : message).trim() || 'not usable';
      throw new ConfigError([`${flag} '${file}' cannot be used as ${what} (${why})`], 'QG_CONFIG_INVALID', {
        field: flag,
      });
    }
  };
  unusable('--tls-cert', certFile, 'a certificate', () => createSecureContext({ cert }));
  unusable('--tls-key', keyFile, 'a private key', () => createSecureContext({ key }));
  try {
    createSecureContext({ cert, key });
  } catch {
    throw new ConfigError(
      [`--tls-key '${keyFile}' is not the key of the certificate in --tls-cert '${certFile}'`],
      'QG_CONFIG_INVALID',
      { field: '--tls-key' },
    );
  }
  return { cert, key };
}
