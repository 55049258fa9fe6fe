/**
 * The connection table on a real loopback server with a small table: a newcomer takes the place of
 * the connection that has waited longest; only when every connection is busy is the newcomer closed;
 * a kept-alive connection that trickles its next request's headers is closed after the headers'
 * time limit.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { type ConnectionTable, limitConnections } from '../../src/metrics/connections.js';

let server: Server | undefined;
let table: ConnectionTable | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  table?.stop();
  for (const s of sockets) s.destroy();
  sockets.length = 0;
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
  server = undefined;
});

async function start(
  max: number,
  handler: (release: () => void) => void = (release) => release(),
  headersTimeout = 10_000,
): Promise<number> {
  server = createServer({ keepAliveTimeout: 60_000 }, (_req, res) => handler(() => res.end('ok')));
  table = limitConnections(server, { max, headersTimeout, checkEveryMs: 50 });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

/** A socket and when it was closed (or never). */
async function open(port: number): Promise<{ socket: Socket; closed: () => boolean; data: () => string }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let closed = false;
  let data = '';
  socket.on('close', () => {
    closed = true;
  });
  socket.on('data', (d: Buffer) => {
    data += d.toString();
  });
  socket.on('error', () => {});
  await new Promise<void>((r) => socket.once('connect', () => r()));
  return { socket, closed: () => closed, data: () => data };
}

/** Waits (at most 5 s, however loaded the machine) until `cond` holds; then checks it. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await sleep(20);
  expect(cond()).toBe(true);
}

/** Opens a socket and waits until the server has taken it into its table. */
async function accepted(port: number): Promise<Awaited<ReturnType<typeof open>>> {
  const before = table!.stats();
  const s = await open(port);
  await until(() => {
    const now = table!.stats();
    return now.open + now.shed + now.refused > before.open + before.shed + before.refused;
  });
  return s;
}

const GET = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

it('closes the connection that has waited longest to make room, never the newcomer', async () => {
  const port = await start(4);
  const silent: Array<Awaited<ReturnType<typeof open>>> = [];
  for (let i = 0; i < 4; i++) silent.push(await accepted(port));
  const newcomer = await accepted(port);
  await until(() => silent[0]!.closed());
  expect(silent.map((s) => s.closed())).toEqual([true, false, false, false]);
  newcomer.socket.write(GET);
  await until(() => /^HTTP\/1\.1 200 /.test(newcomer.data()) && table!.stats().busy === 0);
  expect(table!.stats()).toMatchObject({ open: 4, busy: 0, shed: 1, refused: 0 });
  // An idle kept-alive connection is waiting too, but silent[1] has waited longer.
  const another = await accepted(port);
  await until(() => silent[1]!.closed());
  expect(silent.map((s) => s.closed())).toEqual([true, true, false, false]);
  expect(newcomer.closed()).toBe(false);
  expect(another.closed()).toBe(false);
});

it('closes the newcomer only when every connection is answering a request', async () => {
  const held: Array<() => void> = [];
  const port = await start(3, (release) => held.push(release));
  const busy: Array<Awaited<ReturnType<typeof open>>> = [];
  for (let i = 0; i < 3; i++) {
    const c = await accepted(port);
    c.socket.write(GET);
    busy.push(c);
  }
  await until(() => held.length === 3);
  const newcomer = await accepted(port);
  await until(() => newcomer.closed());
  expect(busy.map((b) => b.closed())).toEqual([false, false, false]);
  expect(table!.stats()).toMatchObject({ open: 3, busy: 3, refused: 1 });
  for (const release of held) release();
  await until(() => busy.every((b) => /^HTTP\/1\.1 200 /.test(b.data())));
  expect(table!.stats()).toMatchObject({ open: 3, busy: 0 });
});

it('closes a kept-alive connection that sends its next request’s headers too slowly', async () => {
  const port = await start(8, undefined, 300);
  const slow = await accepted(port);
  slow.socket.write(GET);
  await until(() => /^HTTP\/1\.1 200 /.test(slow.data()));
  // The next request, a header line at a time: each byte resets Node's idle timer.
  slow.socket.write('GET / HTTP/1.1\r\n');
  const idle = await accepted(port);
  idle.socket.write(GET);
  for (let i = 0; i < 50 && !slow.closed(); i++) {
    await sleep(100);
    if (!slow.closed()) slow.socket.write('X-Slow: 1\r\n');
  }
  expect(slow.closed()).toBe(true);
  // An idle kept-alive connection that sends nothing is not slow.
  expect(idle.closed()).toBe(false);
  expect(table!.stats()).toMatchObject({ slow: 1 });
});
