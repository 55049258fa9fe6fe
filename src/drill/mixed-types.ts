/** What `drill --mixed` reports of its outside spenders (src/drill/mixed.ts). */

export type ClientLang = 'php' | 'python';

/** What one cron job did, from its own summary, its stderr and the run history. */
export interface DrillClient {
  lang: ClientLang;
  /** The token's name: the `client` its runs are recorded under. */
  token: string;
  /** The decision API's URLs, in the order the job tries them. */
  urls: string[];
  runs: number;
  /** Its runs found in the run history (every one of them, when all is well). */
  runsInHistory: number;
  /** Units its runs in the history spent (as the service answered them charged). */
  historyUnits: number;
  spends: number;
  /** Spends by the decision's reason (allowed, budget, blocked, fail-open, unknown, unreachable …). */
  reasons: Record<string, number>;
  /** Pages the simulator served it. */
  pages: number;
  /** Spends made without the service's answer and let through (the client's `fail-open` lines). */
  failOpen: number;
  /** Spends whose answer was lost (the client's `unknown` lines). */
  unknown: number;
  /** Lines written to its journal (records, voids, reports, run records). */
  journalled: number;
  /** Journal lines sent later (replayed), by the job itself. */
  replayed: number;
  /** Journal lines still there when it ended (must be 0). */
  journalLeft: number;
  quotaExceeded: number;
  upstreamErrors: number;
  exitCode: number | null;
  /** Its last lines on stderr when it did not end well. */
  said?: string[];
}

/** One `serve --decisions` instance and what happened to it (times as fractions of the day). */
export interface DrillInstance {
  name: 'A' | 'B';
  url: string;
  events: Array<{ at: number; what: 'started' | 'SIGKILL' | 'SIGTERM' | 'exited' | 'start failed' }>;
}

export interface DrillMixed {
  /** The simulator the day ran against, and the API key of each spender (all in one project's quota). */
  simulator: { url: string; project: string; keys: Record<string, string> };
  instances: DrillInstance[];
  clients: DrillClient[];
  /** Units the clients' runs recorded in the history, and pages the simulator served them. */
  clientUnits: number;
  clientPages: number;
}
