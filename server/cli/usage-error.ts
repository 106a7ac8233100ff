/** A command line that is wrong: printed with the usage, exit code 2. */
export class UsageError extends Error {}
