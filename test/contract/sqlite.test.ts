import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openLedger } from '../../src/index.js';
import { describeLedgerContract } from './suite.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-contract-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeLedgerContract({
  kind: 'sqlite',
  injectableClock: true,
  open: (opts) => openLedger(`sqlite:${join(dir, 'ledger.db')}`, opts?.now ? { now: opts.now } : {}),
});
