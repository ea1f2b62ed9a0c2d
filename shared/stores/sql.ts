/** The one method the SQL adapters need; PGlite and node-postgres both provide it. */
export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}
