import { inject } from 'vitest';
import { openLedger } from '../../src/index.js';
import { describeLedgerContract } from './suite.js';

describeLedgerContract({
  kind: 'redis-cluster',
  injectableClock: false,
  open: () => openLedger(inject('redisClusterUrl'), { keyPrefix: inject('keyPrefix') }),
});
