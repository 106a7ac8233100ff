#!/usr/bin/env node
// The `clipdesk-service` command (launch.js: under the pinned Node when this one is older).
import { launch } from './launch.js';

await launch(import.meta.url, '../server/cli/main.ts');
