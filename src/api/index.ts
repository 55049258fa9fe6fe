export { spendAnswer } from './answers.js';
export type { CallerRules } from './callers.js';
export {
  type ApiRoute,
  createDecisionApi,
  type DecisionApi,
  type DecisionApiOptions,
  MAX_BODY_BYTES,
} from './decisions.js';
export {
  callerRules,
  checkDecisionsAddress,
  type DecisionApiSetup,
  decisionApiFor,
  readTls,
} from './setup.js';
export { type ApiClient, LOCAL_CLIENT, parseTokens, sha256, TokenFile } from './tokens.js';
