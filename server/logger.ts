/**
 * Where the service's modules write what happened: the file log (shared/node/logger.ts) in the
 * service, nothing in tests. Below every layer (docs/architecture.md, "The service's layers"), so
 * that any module may take a logger without taking the whole ServiceContext.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
