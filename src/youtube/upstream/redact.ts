/** The API key kept out of logs and errors: the redaction lives with the Google error model. */
export { redactKeyParam, redactText } from '../../outcome/redact.js';
