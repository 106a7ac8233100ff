export type { Dialect, Sql, SqlDatabase, SqlRunResult, SqlValue } from './types.ts';
export { SqliteSql } from './sqlite.ts';
export { PostgresSql } from './postgres.ts';
export { inJsonArray, numberedPlaceholders } from './dialect.ts';
