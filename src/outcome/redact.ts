/**
 * Keeping a Google API key out of everything that can be logged or thrown. The key travels as the
 * `key` query parameter; every URL is redacted to `key=***` before it is logged or attached to an
 * error, and any text that comes from elsewhere (an undici error, the upstream's own message) has
 * the literal key replaced as well.
 */

const KEY_PARAM = /([?&;]key=)[^&#\s"']*/gi;

/**
 * The API key's `key=` query parameter hidden wherever it appears in `text` (a URL, a message):
 * `https://…/videos?part=x&key=SECRET` → `https://…/videos?part=x&key=***`.
 */
export function redactKeyParam(text: string): string {
  return text.replace(KEY_PARAM, '$1***');
}

/**
 * Removes the `key=` query parameter's value and every literal occurrence of `secret` (raw and
 * percent-encoded) from `text`.
 */
export function redactText(text: string, secret?: string): string {
  let out = redactKeyParam(text);
  if (secret) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      if (form) out = out.split(form).join('***');
    }
  }
  return out;
}
