#!/usr/bin/env node
// The `clipdesk` command (launch.js: under the pinned Node when this one is older).
import { launch } from './launch.js';

const cli = await launch(import.meta.url, '../electron/cli/main.ts');
if (cli) process.exitCode = await cli.main(process.argv.slice(2));
