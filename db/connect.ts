import postgres from 'postgres';

/**
 * A postgres.js client with the project's connection settings and type parsers: the pools of
 * server/db/client.ts, the migrations (db/migrate.ts) and every tool that connects on its own.
 */
export function createSql(url: string, options: postgres.Options<Record<string, postgres.PostgresType>> = {}) {
  return postgres(url, {
    max: 10,
    idle_timeout: 30,
    connect_timeout: 5,
    // The wait before a connection of the pool connects again, from its last failure: postgres.js's
    // default grows with the failures of the whole pool to 10–20 s, so after a few seconds of
    // PostgreSQL down a pool went on failing, or waiting, for up to 20 s once it was back. Capped
    // at 0.5–1 s: a restart is over for every pool (the LISTEN too) within a second of the database.
    backoff: (failures: number) => Math.min(0.05 * 2 ** failures, 1) * (0.5 + Math.random() / 2),
    onnotice: () => {},
    // pg-boss hands postgres.js JSON that is already a string; pass strings through unchanged so it
    // is not encoded twice (docs/architecture.md#pg-boss-pitfalls). Objects are still serialised.
    types: {
      // int8 as a JS number: message ids are bigint and outgrow int4 (a cast to int would then fail
      // the statement); no id or count reaches 2^53.
      int8: { to: 20, from: [20], serialize: (v: number | bigint) => String(v), parse: (v: string) => Number(v) },
      json: {
        to: 114,
        from: [114, 3802],
        serialize: (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v)),
        parse: (v: string) => JSON.parse(v),
      },
    },
    ...options,
  });
}
