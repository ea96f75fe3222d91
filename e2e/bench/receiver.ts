import { spawn } from 'node:child_process';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { freePort } from '@/db/embedded';

/**
 * The platform's side of the outgoing webhooks (docs/api.md#webhooks-you-receive-from-us) for the
 * benchmarks (bench:webhooks-out, bench:appointments): a local HTTP server that verifies every
 * delivery with `standardwebhooks` and the endpoint's secret, and records each arrival with its
 * time; in the bench's process (startReceiver), or in a process of its own (startReceiverProcess:
 * a platform's receiver is not slowed by the bench's traffic generator, whose event loop stalls
 * tens of ms under load). server/testing/webhook-receiver.ts is the tests' (vitest's hooks, no
 * verification, no outage).
 */

export const now = () => performance.timeOrigin + performance.now();

export type Arrival = {
  /** The path's key: POST /{endpoint} (the key `secrets` holds the endpoint's secret under). */
  endpoint: string;
  id: string;
  type: string;
  data: Record<string, unknown>;
  conversationId: number | null;
  sequence: number | null;
  occurredAt: number;
  at: number;
};

/** Longest an answer is held (hold()): under the sender's 15 s deadline, so nothing fails. */
const HOLD_MAX_MS = 12_000;

/**
 * POST /{endpoint key}, verified with the endpoint's secret (`secrets`); 204 when it verifies, 400
 * (counted) when not. `hold`: answers wait (a slow receiver). `goDown`: it stops listening and drops its connections (`refuse`: connections
 * are refused), or answers 503; `comeBack` undoes it.
 */
export async function startReceiver({ downMode = 'refuse' }: { downMode?: 'refuse' | '503' } = {}): Promise<Receiver> {
  const port = await freePort();
  const secrets = new Map<string, Webhook>();
  const arrivals: Arrival[] = [];
  let badSignatures = 0;
  let refused503 = 0;
  let down = false;
  /** While holding: answers wait for release() or HOLD_MAX_MS, whichever is first (under the sender's 15 s deadline). */
  let holding = false;
  const held = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      if (down) {
        refused503++;
        res.writeHead(503).end();
        return;
      }
      const endpoint = (req.url ?? '').slice(1);
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: { type: string; timestamp: string; data: Record<string, unknown> };
      try {
        const wh = secrets.get(endpoint);
        if (!wh) throw new Error(`no endpoint ${endpoint}`);
        payload = wh.verify(body, req.headers as Record<string, string>) as typeof payload;
      } catch {
        badSignatures++;
        res.writeHead(400).end();
        return;
      }
      const data = payload.data;
      arrivals.push({
        endpoint,
        id: String(req.headers['webhook-id']),
        type: payload.type,
        data,
        conversationId: typeof data.conversation_id === 'number' ? data.conversation_id : null,
        sequence: typeof data.sequence === 'number' ? data.sequence : null,
        occurredAt: Date.parse(payload.timestamp),
        at,
      });
      if (!holding) {
        res.writeHead(204).end();
        return;
      }
      const answer = () => {
        clearTimeout(timer);
        held.delete(answer);
        res.writeHead(204).end();
      };
      const timer = setTimeout(answer, HOLD_MAX_MS);
      held.add(answer);
    });
  });
  server.keepAliveTimeout = 10_000;
  const listen = () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    addEndpoint: async (key, secret) => void secrets.set(key, new Webhook(secret)),
    sync: async () => {},
    arrivals,
    get badSignatures() {
      return badSignatures;
    },
    get refused503() {
      return refused503;
    },
    cpuSeconds: NaN,
    async goDown() {
      down = true;
      if (downMode === '503') return;
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
    /** Verified requests are recorded at once and answered later (release): a slow receiver, no failures. */
    async hold() {
      holding = true;
    },
    async release() {
      holding = false;
      for (const answer of [...held]) answer();
    },
    async comeBack() {
      if (downMode === 'refuse') await listen();
      down = false;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
export type Receiver = {
  url: string;
  /** Requests to /{key} are verified with `secret`. */
  addEndpoint: (key: string, secret: string) => Promise<void>;
  /** Every arrival the receiver has recorded so far is in `arrivals` once this resolves. */
  sync: () => Promise<void>;
  arrivals: Arrival[];
  readonly badSignatures: number;
  readonly refused503: number;
  /** The receiver process's CPU time so far, in seconds (as of its last report; NaN in the bench's own process). */
  readonly cpuSeconds: number;
  hold: () => Promise<void>;
  release: () => Promise<void>;
  goDown: () => Promise<void>;
  comeBack: () => Promise<void>;
  close: () => Promise<void>;
};

type Command = 'addEndpoint' | 'sync' | 'hold' | 'release' | 'goDown' | 'comeBack' | 'close';
export type ReceiverCommand = { id: number; op: Command; key?: string; secret?: string };
export type ReceiverMessage =
  | { ready: string }
  | { arrivals: Arrival[]; badSignatures: number; refused503: number; cpuSeconds: number }
  | { ack: number; cpuSeconds: number };

/** startReceiver in a child process (receiver-process.ts), driven over IPC, its arrivals sent back every 50 ms. */
export async function startReceiverProcess({ downMode = 'refuse' }: { downMode?: 'refuse' | '503' } = {}): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'e2e/bench/receiver-process.ts'], {
    env: { ...process.env, RECEIVER_DOWN_MODE: downMode },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const arrivals: Arrival[] = [];
  let badSignatures = 0;
  let refused503 = 0;
  let cpuSeconds = 0;
  const acks = new Map<number, () => void>();
  let next = 0;
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver process exited (${code})`)));
    child.on('message', (m: ReceiverMessage) => {
      if ('ready' in m) resolve(m.ready);
      else if ('arrivals' in m) {
        for (const a of m.arrivals) arrivals.push(a);
        badSignatures = m.badSignatures;
        refused503 = m.refused503;
        cpuSeconds = m.cpuSeconds;
      } else {
        cpuSeconds = m.cpuSeconds;
        acks.get(m.ack)?.();
        acks.delete(m.ack);
      }
    });
  });
  const call = (op: Command, extra: Partial<ReceiverCommand> = {}) =>
    new Promise<void>((resolve) => {
      const id = ++next;
      acks.set(id, resolve);
      child.send({ id, op, ...extra } satisfies ReceiverCommand);
    });
  return {
    url,
    arrivals,
    get badSignatures() {
      return badSignatures;
    },
    get refused503() {
      return refused503;
    },
    get cpuSeconds() {
      return cpuSeconds;
    },
    addEndpoint: (key, secret) => call('addEndpoint', { key, secret }),
    sync: () => call('sync'),
    hold: () => call('hold'),
    release: () => call('release'),
    goDown: () => call('goDown'),
    comeBack: () => call('comeBack'),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      await call('close');
      child.disconnect();
      await exited;
    },
  };
}
