// node-postgres ships no types and the project does not take @types/pg for the few calls
// server/jobs/boss-db.ts makes (the pool pg-boss itself would open); only those are declared.
declare module 'pg' {
  import type { EventEmitter } from 'node:events';

  export type QueryResult = { rows: unknown[]; rowCount: number | null };

  export interface PoolClient extends EventEmitter {
    query(text: string, values?: unknown[]): Promise<QueryResult>;
    /** An error (or `true`) removes the connection from the pool instead of keeping it. */
    release(err?: Error | boolean): void;
  }

  export type PoolConfig = { connectionString?: string; max?: number; application_name?: string };

  export class Pool extends EventEmitter {
    constructor(config?: PoolConfig);
    connect(): Promise<PoolClient>;
    end(): Promise<void>;
  }

  const pg: { Pool: typeof Pool };
  export default pg;
}
