#!/usr/bin/env node
// The `rlock` command (a `bin` of @org/rlock): see `rlock --help` and the package README.
import { run } from './program.js';

process.exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
