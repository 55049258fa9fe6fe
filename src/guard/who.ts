/** Who runs this process: the user and host a line that changes every host's spending names. */
import { hostname, userInfo } from 'node:os';

/** Who runs this process, for a line that changes what every host may spend: user and host. */
export function whoAmI(): { user: string; host: string } {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid (a container): the environment's name, else the uid.
    user = process.env['USER'] ?? process.env['LOGNAME'] ?? String(process.getuid?.() ?? '?');
  }
  return { user, host: hostname() };
}
