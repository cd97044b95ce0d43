/**
 * Work under way that a stop must wait for: each Slack request's listeners, from arrival until
 * they return (after the ack too: a submission's call to the approval service and its
 * recording happen then).
 */
export interface InFlight {
  /** Counts `work` as under way until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T>;
  readonly size: number;
  /**
   * Waits until nothing is under way, or until `deadline` (epoch ms): what finished meanwhile
   * and what was still under way then.
   */
  settled(deadline: number): Promise<{ finished: number; left: number }>;
}

export function createInFlight(): InFlight {
  const under = new Set<Promise<void>>();
  let finished = 0;
  return {
    track(work) {
      // Settles either way and never rejects: the caller handles `work`'s failure, and a second
      // promise rejecting beside it would be an unhandled rejection.
      const tracked: Promise<void> = work.then(
        () => undefined,
        () => undefined,
      );
      under.add(tracked);
      void tracked.then(() => {
        under.delete(tracked);
        finished++;
      });
      return work;
    },
    get size() {
      return under.size;
    },
    async settled(deadline) {
      const before = finished;
      while (under.size > 0 && Date.now() < deadline) {
        const wait = Math.max(0, deadline - Date.now());
        await Promise.race([
          Promise.allSettled([...under]),
          new Promise((resolve) => setTimeout(resolve, wait).unref()),
        ]);
      }
      return { finished: finished - before, left: under.size };
    },
  };
}
