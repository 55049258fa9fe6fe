/**
 * `serve` started by socket activation keeps its socket across a restart: a small supervisor does
 * what systemd does (binds the socket, passes it as descriptor 3 with LISTEN_FDS and LISTEN_PID,
 * stops the process with SIGTERM and starts the next on the same socket). A job that spends the
 * whole time, each spend on a new connection, is never refused and never reset: what arrives
 * while no process answers waits in the socket's queue. Every allowed spend is recorded once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, inject, it } from 'vitest';
import { writeConfig } from './helpers.js';

const BIN = new URL('../../src/cli/bin.ts', import.meta.url).pathname;

/** systemd's part: the socket, and a process started on it, stopped and started again on demand. */
const SUPERVISOR = `
import os, signal, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(128)
print(s.getsockname()[1], flush=True)
def start():
    pid = os.fork()
    if pid == 0:
        os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_FDS"] = "1"
        os.environ["LISTEN_PID"] = str(os.getpid())
        os.execvp(sys.argv[1], sys.argv[1:])
    return pid
child = start()
for line in sys.stdin:
    os.kill(child, signal.SIGTERM)
    os.waitpid(child, 0)
    if line.strip() == "stop":
        break
    child = start()
`;

let supervisor: ChildProcess | undefined;
afterAll(() => {
  supervisor?.kill('SIGKILL');
});

function spend(port: number, body: string): Promise<{ status: number; allowed: boolean; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/spend',
        agent: false,
        headers: { 'content-type': 'application/json', connection: 'close' },
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => {
          const allowed = res.statusCode === 200 && (JSON.parse(text) as { allowed: boolean }).allowed;
          resolve({ status: res.statusCode ?? 0, allowed, ms: Date.now() - started });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer in 20 s')));
    req.end(body);
  });
}

it('answers every spend through two restarts on the socket systemd keeps, refusing and resetting none', async () => {
  const cred = `sa${randomBytes(4).toString('hex')}`;
  const config = writeConfig({ store: inject('redisUrl'), credentials: [{ id: cred }] });
  supervisor = spawn(
    'python3',
    ['-c', SUPERVISOR, process.execPath, '--import', 'tsx', BIN, 'serve', '--config', config, '--decisions'],
    { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  supervisor.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  supervisor.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const serving = () => (err.match(/"socket":"inherited"[^\n]*serving the decision API/g) ?? []).length;
  const until = async (cond: () => boolean, what: string) => {
    for (let i = 0; i < 1500 && !cond(); i++) await sleep(20);
    if (!cond()) throw new Error(`${what}: ${err}`);
  };
  await until(() => /^\d+\n/.test(out), 'the supervisor did not bind');
  const port = Number(out.trim().split('\n')[0]);
  await until(() => serving() === 1, 'serve did not start');

  const body = JSON.stringify({ credential: cred, method: 'videos.list', tag: 'activated' });
  const answers: Array<{ status: number; allowed: boolean; ms: number }> = [];
  const errors: string[] = [];
  let running = true;
  const job = (async () => {
    while (running) {
      try {
        answers.push(await spend(port, body));
      } catch (e) {
        errors.push(String((e as { code?: string }).code ?? e));
      }
    }
  })();
  for (let restart = 2; restart <= 3; restart++) {
    await sleep(1_000);
    supervisor.stdin!.write('restart\n');
    await until(() => serving() === restart, `serve did not start again (${restart})`);
  }
  await sleep(1_000);
  running = false;
  await job;

  expect(errors).toEqual([]);
  expect(answers.every((a) => a.status === 200)).toBe(true);
  // Some spends waited in the queue while no process answered: none was refused.
  expect(answers.length).toBeGreaterThan(20);
  const used = await (await fetch(`http://127.0.0.1:${port}/v1/status?credential=${cred}`)).json();
  const units = (
    used as { credentials: Array<{ buckets: Array<{ id: string; used: number }> }> }
  ).credentials[0]!.buckets.find((b) => b.id === 'units')!.used;
  expect(units).toBe(answers.filter((a) => a.allowed).length);
  supervisor.stdin!.write('stop\n');
  await new Promise((r) => supervisor!.once('exit', r));
}, 90_000);
