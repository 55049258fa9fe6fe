import { inject } from 'vitest';
import { openLedger } from '../../src/index.js';
import { describeLedgerContract } from './suite.js';

describeLedgerContract({
  kind: 'redis',
  injectableClock: false,
  open: () => openLedger(inject('redisUrl'), { keyPrefix: inject('keyPrefix') }),
});
