export { main, HELP } from './main.ts';
export { EXIT, UsageError, describeFailure } from './errors.ts';
export type { CliIo } from './io.ts';
