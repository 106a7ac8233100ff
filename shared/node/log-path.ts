import { join } from 'node:path';

/** Which program writes a log: each has its own rotating file in its data folder. */
export type LogProgram = 'app' | 'service' | 'cli' | 'mcp';

/**
 * Where a program's log lives: `<dataDir>/logs/<program>.log` (rotated files sit beside it). One
 * function, so that the logger that writes it and `clipdesk doctor` that prints it cannot disagree.
 */
export function logFilePath(dataDir: string, program: LogProgram): string {
  return join(dataDir, 'logs', `${program}.log`);
}
