import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { every } from './periodic';

describe('every: a periodic task', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs each tick, but never while its previous run is still going', async () => {
    let runs = 0;
    let finish!: () => void;
    const task = vi.fn(() => {
      runs++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const periodic = every(1_000, task, () => {});
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000); // still running: three ticks skipped
    expect(runs).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
    periodic.stop();
  });

  it('reports a failure once and pauses, then tries again after the pause', async () => {
    const failures: unknown[] = [];
    const task = vi.fn(() => Promise.reject(new Error('must be owner of index')));
    const periodic = every(1_000, task, (err) => failures.push(err), 60_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(task).toHaveBeenCalledTimes(1);
    expect(failures).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(task).toHaveBeenCalledTimes(2);
    expect(failures).toHaveLength(2);
    periodic.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(task).toHaveBeenCalledTimes(2);
  });
});
