/**
 * A run history opened on its first use: a process that records no run (or only reads budgets)
 * opens no second connection, and closing one that was never opened costs nothing.
 */
import type { StoreConfig } from '../config/types.js';
import { openRunHistory } from './history.js';
import type { RunHistory } from './types.js';

export function lazyRunHistory(store: StoreConfig): RunHistory {
  let opened: Promise<RunHistory> | undefined;
  let closed = false;
  const get = (): Promise<RunHistory> => {
    opened ??= openRunHistory(store);
    return opened;
  };
  return {
    record: async (run, once) => (await get()).record(run, once),
    list: async (query) => (await get()).list(query),
    lastSuccess: async (credentials) => (await get()).lastSuccess(credentials),
    totals: async (credentials) => (await get()).totals(credentials),
    async close() {
      if (closed) return;
      closed = true;
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
