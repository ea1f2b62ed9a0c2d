/** The one method the SQL transport (sql-rpc.ts) needs; PGlite and node-postgres both provide it. */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}
