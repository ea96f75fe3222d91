import { describe, expect, it } from 'vitest';
import { QUEUE_OPTIONS } from '@/server/jobs/queues';
import { QUEUE_REGISTRATIONS } from './registrations';

describe('worker registrations', () => {
  it('handle every queue once, but the dead letters, which keep failed sends for a person to look at', () => {
    const deadLetters = new Set(Object.values(QUEUE_OPTIONS).flatMap((o) => (o.deadLetter ? [o.deadLetter] : [])));
    const handled = Object.keys(QUEUE_OPTIONS).filter((name) => !deadLetters.has(name));
    expect(QUEUE_REGISTRATIONS.map((r) => r.queue).sort()).toEqual(handled.sort());
  });
});
