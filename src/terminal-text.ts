/**
 * Text from outside (upstream titles and descriptions, the upstream's error messages, names found in
 * a foreign file) made safe to print on a terminal: control characters (C0 and C1: the escape
 * sequences that clear the screen or set the window title start with one) and bidirectional
 * embeddings, overrides, isolates and marks (which reorder what follows them on the line) become
 * U+FFFD, and line breaks a space.
 */

function unsafe(c: number): boolean {
  return (
    c < 0x20 || // C0 controls (ESC starts an escape sequence)
    (c >= 0x7f && c <= 0x9f) || // DEL and the C1 controls (CSI, OSC…)
    c === 0x061c || // Arabic letter mark
    c === 0x200e ||
    c === 0x200f || // left-to-right and right-to-left marks
    (c >= 0x202a && c <= 0x202e) || // embeddings and overrides
    (c >= 0x2066 && c <= 0x2069) // isolates
  );
}

/**
 * A JSON log line for a terminal: pino already escapes C0 controls; C1 controls and bidi characters
 * (which can only stand inside its strings) become `\uXXXX` escapes, so the line stays the same JSON.
 */
export function terminalJsonLine(line: string): string {
  let out = '';
  for (const ch of line) {
    const c = ch.codePointAt(0)!;
    out +=
      c >= 0x20 && (unsafe(c) || c === 0x2028 || c === 0x2029) ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}

/**
 * `JSON.stringify(value, null, indent)` made safe for a terminal, losslessly: every control
 * character (JSON.stringify escapes C0 but not DEL or C1), bidi control and line separator in a
 * string is written as its `\uXXXX` escape, so a terminal shows the escape and a JSON reader gets
 * the text back unchanged. What `--json` prints goes through this.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return terminalJsonLine(JSON.stringify(value, null, indent));
}

/** `text` with nothing that can drive a terminal or reorder a line, on one line. */
export function terminalText(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) out += ' ';
    else out += unsafe(c) ? '\uFFFD' : ch;
  }
  return out;
}
