#!/usr/bin/env node
import { main } from './main.js';

process.exitCode = await main();

// The command is over. Something still holding the event loop open here (a socket or timer a
// library kept) would make a cron job pile up; say so and exit instead of hanging.
const LINGER_MS = 1000;
setTimeout(() => {
  process.stderr.write(`quota-guard: still busy ${LINGER_MS} ms after the command ended; exiting\n`);
  process.exit();
}, LINGER_MS).unref();
