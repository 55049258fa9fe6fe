/**
 * The decision API as `serve --decisions` and `run --http --decisions` set it up: tokens from their
 * file, and the rule that without tokens it serves loopback only.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import type { RunHistory } from '../history/types.js';
import { isLoopback } from '../http-address.js';
import type { Logger } from '../logger.js';
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
  logger?: Logger;
  onRequest?: DecisionApiOptions['onRequest'];
  labelsOf?: DecisionApiOptions['labelsOf'];
}

export function decisionApiFor(s: DecisionApiSetup): DecisionApi {
  if (s.tokens === undefined && s.tokensFile === undefined && !isLoopback(s.host)) {
    throw new ConfigError(
      [
        `the decision API serves beyond loopback (${s.host}) only with bearer tokens: give --tokens <file> (docs/http-api.md)`,
      ],
      'QG_CONFIG_INVALID',
      { field: '--tokens' },
    );
  }
  s.tokens?.logTo(s.logger);
  const tokens = s.tokens ?? (s.tokensFile !== undefined ? new TokenFile(s.tokensFile, s.logger) : undefined);
  return createDecisionApi({
    guard: s.guard,
    history: s.history,
    ...(tokens ? { tokens } : {}),
    ...(s.logger ? { logger: s.logger } : {}),
    ...(s.onRequest ? { onRequest: s.onRequest } : {}),
    ...(s.labelsOf ? { labelsOf: s.labelsOf } : {}),
  });
}

/** `--tls-cert` and `--tls-key` read, or a ConfigError naming the file that cannot be read. */
export function readTls(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file);
    } catch {
      throw new ConfigError([`${flag} '${file}' cannot be read`], 'QG_CONFIG_INVALID', { field: flag });
    }
  };
  return { cert: read(certFile, '--tls-cert'), key: read(keyFile, '--tls-key') };
}
