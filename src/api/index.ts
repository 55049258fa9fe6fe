export { spendAnswer } from './answer.js';
export {
  type ApiRoute,
  createDecisionApi,
  type DecisionApi,
  type DecisionApiOptions,
  MAX_BODY_BYTES,
} from './decisions.js';
export { type DecisionApiSetup, decisionApiFor, readTls } from './setup.js';
export { type ApiClient, LOCAL_CLIENT, parseTokens, sha256, TokenFile } from './tokens.js';
