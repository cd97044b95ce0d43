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
  const under = new Set<Promise<unknown>>();
  let finished = 0;
  return {
    track(work) {
      const tracked = work.finally(() => {
        under.delete(tracked);
        finished++;
      });
      under.add(tracked);
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
