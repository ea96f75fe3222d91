import { describe, expect, it } from 'vitest';
import { QUEUE_OPTIONS } from '@/server/jobs/queues';
import { PERIODIC_TASKS, QUEUE_REGISTRATIONS } from './registrations';

describe('worker registrations', () => {
  it('handle every queue once, but the dead letters, which keep failed sends for a person to look at', () => {
    const deadLetters = new Set(Object.values(QUEUE_OPTIONS).flatMap((o) => (o.deadLetter ? [o.deadLetter] : [])));
    const handled = Object.keys(QUEUE_OPTIONS).filter((name) => !deadLetters.has(name));
    expect(QUEUE_REGISTRATIONS.map((r) => r.queue).sort()).toEqual(handled.sort());
  });
});

describe('periodic tasks', () => {
  it('send due notification emails every 30 s and waiting digests every 5 minutes (docs/api.md#email-notifications-and-the-waiting-digest)', () => {
    const every = (failure: string) => PERIODIC_TASKS.find((t) => t.failure === failure)?.everyMs;
    expect(every('notification emails failed')).toBe(30_000);
    expect(every('waiting digests failed')).toBe(5 * 60_000);
  });
});
