export { type Answer, type Classifier, googleClassifier, type Verdict } from './classify.js';
export { type FetchInput, type GuardedFetchOptions, guardedFetch } from './fetch.js';
export {
  type GuardInterceptor,
  type GuardInterceptorOptions,
  GuardStoppedError,
  guardInterceptor,
} from './interceptor.js';
