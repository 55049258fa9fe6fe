/** A request body read by the simulator's control and token routes: bounded, as text or as JSON. */
import type { IncomingMessage } from 'node:http';
import { InvalidArgumentError } from '../../errors.js';

const MAX_BODY = 64 * 1024;

/** The body as text; a body over 64 KiB is refused and its request destroyed. */
export function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new InvalidArgumentError('body', `larger than ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The body as JSON (`{}` when empty). */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = (await readText(req)).trim();
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('body', 'is not JSON');
  }
}
