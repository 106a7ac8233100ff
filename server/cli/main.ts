import { runCli } from './program.ts';

/** `clipdesk-service`: the entry point behind bin/clipdesk-service.js and `npm run service`. */
const code = await runCli(
  process.argv.slice(2),
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    stdin: process.stdin,
  },
  {
    onStop(stop) {
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
  },
);
process.exitCode = code;
