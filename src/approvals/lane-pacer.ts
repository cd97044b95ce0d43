/**
 * Spaces calls per lane (a channel, a DM) on this process's monotonic clock: after a post, the
 * lane waits `intervalMs`; after a rate-limit answer, as long as the chat asked. Entries are
 * dropped once they no longer hold anything back, so the map stays as small as the busy lanes.
 */
export function createLanePacer(intervalMs: number, clock: () => number = () => performance.now()) {
  const readyAt = new Map<string, number>();

  function prune(now: number): void {
    for (const [lane, at] of readyAt) if (at <= now) readyAt.delete(lane);
  }

  return {
    posted(lane: string): void {
      const at = clock() + intervalMs;
      readyAt.set(lane, Math.max(readyAt.get(lane) ?? 0, at));
    },
    pause(lane: string, ms: number): void {
      const at = clock() + ms;
      readyAt.set(lane, Math.max(readyAt.get(lane) ?? 0, at));
    },
    /** Lanes that must not be posted to yet. */
    waitingLanes(): string[] {
      prune(clock());
      return [...readyAt.keys()];
    },
    /** How long until the first waiting lane is free again; undefined when none waits. */
    nextReadyInMs(): number | undefined {
      const now = clock();
      prune(now);
      let next: number | undefined;
      for (const at of readyAt.values()) next = next === undefined ? at : Math.min(next, at);
      return next === undefined ? undefined : Math.max(1, Math.ceil(next - now));
    },
  };
}
