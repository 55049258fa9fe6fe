#!/usr/bin/env node
import { main } from './main.js';

process.exitCode = await main();
