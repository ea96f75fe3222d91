import type postgres from 'postgres';
import { logger } from '@/server/logger';

/**
 * One rule for every pool (docs/architecture.md#lost-connections): a statement that fails because its
 * connection died before anything of it was sent is retried once, on a fresh connection; a
 * statement that may have reached the server never is (a transaction under way fails as it is,
 * and the client's Idempotency-Key makes its retry safe).
 */

/**
 * The connection died (or the pool was closing): closed or reset, the server's goodbye (57P01
 * admin shutdown, 57P02), a write on a dead socket. Not "the database is not there"
 * (ECONNREFUSED, a connect timeout, 57P03 starting up): running again at once would meet the same.
 */
const DIED = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNRESET',
  'EPIPE',
  '57P01',
  '57P02',
  '08003',
  '08006',
]);

export function connectionDied(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DIED.has(code);
}

/**
 * postgres.js gives a query its connection's state when it hands it to a session
 * (connection.js `execute`); one that failed without it was never written: refused by a connection
 * already gone (patches/postgres+3.4.9.patch), or failed while its connection was being opened.
 */
function sentNothing(query: unknown, err: unknown): boolean {
  return connectionDied(err) && (query as { state?: unknown }).state == null;
}

function retried(err: unknown) {
  logger.warn(
    { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
    'database connection gone before the statement was sent; sent again on a fresh connection',
  );
}

/** The query modifiers drizzle and our statements use; each attempt gets the same ones. */
type Modifier = 'values' | 'raw' | 'simple' | 'describe';

/** `sql.unsafe(…)`'s lazy query, run at most twice: again only if the first attempt sent nothing. */
class RetryingQuery implements PromiseLike<unknown> {
  #modifiers: Modifier[] = [];
  #result: Promise<unknown> | undefined;

  constructor(private readonly start: () => postgres.PendingQuery<postgres.Row[]>) {}

  values() {
    return this.#modify('values');
  }
  raw() {
    return this.#modify('raw');
  }
  simple() {
    return this.#modify('simple');
  }
  describe() {
    return this.#modify('describe');
  }
  execute() {
    void this.#run().catch(() => {}); // the caller awaits this object for the outcome
    return this;
  }
  then<A = unknown, B = never>(
    onFulfilled?: ((value: unknown) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#run().then(onFulfilled, onRejected);
  }
  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null) {
    return this.#run().catch(onRejected);
  }
  finally(onFinally?: (() => void) | null) {
    return this.#run().finally(onFinally);
  }

  #modify(modifier: Modifier) {
    this.#modifiers.push(modifier);
    return this;
  }

  #attempt() {
    const query = this.start();
    for (const m of this.#modifiers) query[m]();
    return query;
  }

  #run(): Promise<unknown> {
    this.#result ??= (async () => {
      const first = this.#attempt();
      try {
        return await first;
      } catch (err) {
        if (!sentNothing(first, err)) throw err;
        retried(err);
        return await this.#attempt();
      }
    })();
    return this.#result;
  }
}

/**
 * A pool whose `unsafe` statements (drizzle's and server/db/prepared.ts's) and transactions follow the
 * rule. A transaction is begun again only when its callback never started (its BEGIN, sent or
 * not, did nothing); once the callback runs, a lost connection fails it. Everything else — tagged
 * templates, `reserve`, `listen` — is the pool itself.
 */
export function retryingUnsent<S extends postgres.Sql<Record<string, postgres.PostgresType>>>(sql: S): S {
  const unsafe = (query: string, parameters?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) =>
    new RetryingQuery(() => sql.unsafe(query, parameters, options));
  const begin = async (...args: unknown[]) => {
    const fn = args.pop() as (tx: postgres.TransactionSql) => unknown;
    let started = false;
    const begun = (options: unknown[], callback: typeof fn) =>
      (sql.begin as (...a: unknown[]) => Promise<unknown>)(...options, callback);
    try {
      return await begun(args, (tx) => ((started = true), fn(tx)));
    } catch (err) {
      if (started || !connectionDied(err)) throw err;
      retried(err);
      return await begun(args, fn);
    }
  };
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === 'unsafe') return unsafe;
      if (prop === 'begin') return begin;
      return Reflect.get(target, prop, receiver);
    },
  });
}
