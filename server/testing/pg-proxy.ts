import net from 'node:net';
import { createSql } from '@/db/connect';

/**
 * A TCP proxy in front of a PostgreSQL, for tests of what a pool does when a connection dies at a
 * chosen moment: `greetWithGoodbye(n)` answers the next n connections' startup message with the
 * FATAL 57P01 a server shutting down sends (nothing reaches the server); `cut()` drops every
 * connection open now, as a server that went away would, while the server side runs on.
 */
export type PgProxy = {
  /** The target's URL with the proxy's port. */
  url: string;
  greetWithGoodbye: (connections: number) => void;
  cut: () => void;
  close: () => Promise<void>;
};

/** An ErrorResponse: severity FATAL, SQLSTATE 57P01, as PostgreSQL's fast shutdown sends it. */
function adminShutdown(): Buffer {
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0');
  const head = Buffer.alloc(5);
  head.write('E');
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}

export async function startPgProxy(targetUrl: string): Promise<PgProxy> {
  const target = new URL(targetUrl);
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let goodbyes = 0;
  const proxy = net.createServer((client) => {
    client.on('error', () => {});
    if (goodbyes > 0) {
      goodbyes--;
      client.once('data', () => client.end(adminShutdown()));
      return;
    }
    const server = net.connect(Number(target.port), target.hostname);
    server.on('error', () => client.destroy());
    const pair = { client, server };
    pairs.add(pair);
    client.on('close', () => {
      pairs.delete(pair);
      server.end();
    });
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    greetWithGoodbye(connections) {
      goodbyes = connections;
    },
    cut() {
      for (const { client, server } of pairs) {
        // The server side stays open until its statement is done: it runs, and its answer is lost.
        client.unpipe(server);
        server.unpipe(client);
        client.destroy();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client } of pairs) client.destroy();
        proxy.close(() => resolve());
      }),
  };
}

/**
 * Waits until a statement whose text contains `marker` runs on the server of `databaseUrl`, in its
 * database (`running`), or until no session shows it any more (`ended`: its session is gone, so
 * what it did is committed or rolled back). A test cuts a connection while the statement runs and
 * then reads what it left, at the moments that matter rather than after fixed sleeps a busy machine
 * outruns.
 */
export async function awaitStatement(databaseUrl: string, marker: string, until: 'running' | 'ended', ms = 30_000) {
  const direct = createSql(databaseUrl, { max: 1 });
  try {
    for (const deadline = Date.now() + ms; ;) {
      const [row] = await direct`
        select count(*) filter (where state = 'active')::int as running, count(*)::int as sessions
        from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and position(${marker} in query) > 0`;
      if (until === 'running' ? row!.running > 0 : row!.sessions === 0) return;
      if (Date.now() > deadline) throw new Error(`no statement with ${JSON.stringify(marker)} ${until} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await direct.end();
  }
}
