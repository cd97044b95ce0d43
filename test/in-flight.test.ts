import { describe, expect, it } from 'vitest';
import { createInFlight } from '../src/in-flight.ts';

// What a stop waits for: work under way, counted until it settles, however it settles.

describe('work under way', () => {
  it('counts work until it settles, and a failure stays the caller’s alone (no unhandled rejection)', async () => {
    const inFlight = createInFlight();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = inFlight.track(Promise.reject(new Error('listener failed')));
      const slow = inFlight.track(new Promise((r) => setTimeout(r, 50)));
      expect(inFlight.size).toBe(2);
      await expect(failing).rejects.toThrow('listener failed');
      await slow;
      await new Promise((r) => setTimeout(r, 10));
      expect(inFlight.size).toBe(0);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('waits until nothing is under way, or until the deadline, and says what was left', async () => {
    const inFlight = createInFlight();
    void inFlight.track(new Promise((r) => setTimeout(r, 30)));
    void inFlight.track(new Promise((r) => setTimeout(r, 5000)).then(() => undefined));
    const result = await inFlight.settled(Date.now() + 300);
    expect(result).toEqual({ finished: 1, left: 1 });
  });
});
