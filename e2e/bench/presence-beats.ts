import { forkChild } from './child';

/**
 * The staff side of `npm run bench:presence` (events.ts --presence): a child process that beats
 * `presence.beat` for every staff member, as the inbox does with a conversation open
 * (components/inbox/presence.tsx): each on a conversation of their own, every `intervalMs` from a
 * random start, over the same session as their stream (cookie and same-origin header, as a
 * browser sends them). `churn` is the share of beats that change what colleagues see (viewing ⇄
 * replying, as typing starts and stops), the rest say "still here". `stop` ends some staff's beats,
 * as a closed tab does, and answers when each one's last beat was answered: what the server's expiry
 * is measured from.
 */

export type BeatingStaff = { idx: number; cookie: string; conversationId: number };
export type ToBeater =
  | { cmd: 'start'; base: string; staff: BeatingStaff[]; intervalMs: number; churn: number }
  | { cmd: 'stats' }
  | { cmd: 'stop'; idxs: number[] }
  | { cmd: 'close' };
export type BeatStats = {
  type: 'stats';
  sent: number;
  failed: number;
  firstFailure: string | null;
  /** ms from the request to its answer, each beat. */
  latencies: number[];
  /** Beats that changed the state (typing started or stopped). */
  changes: number;
};
export type Stopped = { type: 'stopped'; lastBeatAt: [number, number][] };
type FromBeater = BeatStats | Stopped | { type: 'started' };

const now = () => performance.timeOrigin + performance.now();

function beater() {
  type One = {
    spec: BeatingStaff;
    state: 'viewing' | 'replying';
    timer?: NodeJS.Timeout;
    inflight?: Promise<void>;
    lastAt: number;
  };
  const staff = new Map<number, One>();
  let stats: BeatStats = { type: 'stats', sent: 0, failed: 0, firstFailure: null, latencies: [], changes: 0 };
  const send = (m: FromBeater) => process.send!(m);

  async function beat(base: string, one: One, churn: number) {
    if (Math.random() < churn) {
      one.state = one.state === 'viewing' ? 'replying' : 'viewing';
      stats.changes++;
    }
    const started = now();
    stats.sent++;
    try {
      const res = await fetch(`${base}/api/trpc/presence.beat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: `session=${encodeURIComponent(one.spec.cookie)}`,
          origin: base,
        },
        body: JSON.stringify({ json: { conversationId: one.spec.conversationId, state: one.state } }),
      });
      const body = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${body.slice(0, 200)}`);
      one.lastAt = now();
      stats.latencies.push(one.lastAt - started);
    } catch (err) {
      stats.failed++;
      stats.firstFailure ??= (err as Error).message;
    }
  }

  process.on('message', async (m: ToBeater) => {
    if (m.cmd === 'start') {
      for (const spec of m.staff) {
        const one: One = { spec, state: 'viewing', lastAt: 0 };
        staff.set(spec.idx, one);
        const tick = () => {
          one.inflight = beat(m.base, one, m.churn);
          one.timer = setTimeout(tick, m.intervalMs);
        };
        one.timer = setTimeout(tick, Math.random() * m.intervalMs);
      }
      send({ type: 'started' });
    } else if (m.cmd === 'stats') {
      send(stats);
      stats = { type: 'stats', sent: 0, failed: 0, firstFailure: null, latencies: [], changes: 0 };
    } else if (m.cmd === 'stop') {
      const stopped = m.idxs.map((idx) => staff.get(idx)!);
      for (const one of stopped) clearTimeout(one.timer);
      await Promise.all(stopped.map((one) => one.inflight));
      send({ type: 'stopped', lastBeatAt: stopped.map((one) => [one.spec.idx, one.lastAt]) });
    } else if (m.cmd === 'close') {
      for (const one of staff.values()) clearTimeout(one.timer);
      setTimeout(() => process.exit(0), 100);
    }
  });
  process.on('disconnect', () => process.exit(0));
}

/** The beater process. */
export const startBeater = () => forkChild<ToBeater, FromBeater>('e2e/bench/presence-beats.ts', '--beater');

if (process.argv.includes('--beater')) beater();
