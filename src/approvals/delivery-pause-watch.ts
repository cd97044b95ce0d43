import type { Announcer } from './announcer.ts';
import type { DeliveryPause } from './delivery-pause.ts';

/*
 * The dispatcher's side of the fleet-wide pause (delivery-pause.ts): set when Slack refuses the
 * app's token, and lifted by whichever replica finds, asking every `pauseCheckMs`, that Slack
 * accepts it again.
 */

export interface PauseWatchDeps {
  store: DeliveryPause;
  announcer: Pick<Announcer, 'checkCredentials'>;
  logger: {
    info(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  now: () => Date;
  monotonic: () => number;
  /** Told once delivery may run again, so that it looks at once. */
  resumed: () => void;
}

export function createPauseWatch(deps: PauseWatchDeps, pauseCheckMs: number) {
  let lastCheck = Number.NEGATIVE_INFINITY;
  return {
    /** Whether the loop should ask again (every `pauseCheckMs`, on this process's clock). */
    due(): boolean {
      return deps.monotonic() - lastCheck >= pauseCheckMs;
    },

    /** Slack refused the app's token: pauses delivery everywhere. */
    async pauseEverything(reason: string, now: Date): Promise<void> {
      // One line for the fleet: only the replica that set the pause logs it.
      if (await deps.store.pauseDelivery(reason, now))
        deps.logger.error(
          { reason },
          'Slack refuses the app’s token: all delivery is paused until it works again (checked every ' +
            `${Math.round(pauseCheckMs / 1000)} s); nothing is failed meanwhile`,
        );
      lastCheck = deps.monotonic();
    },

    /**
     * While delivery is paused (by any replica), asks Slack whether the token works again and
     * lifts the pause when it does. True while delivery stays paused.
     */
    async checkPause(): Promise<boolean> {
      lastCheck = deps.monotonic();
      const pause = await deps.store.deliveryPause();
      if (!pause) return false;
      const verdict = await deps.announcer.checkCredentials().catch(() => 'unknown' as const);
      if (verdict !== 'ok') return true;
      if (await deps.store.resumeDelivery(deps.now()))
        deps.logger.info(
          { pausedSince: pause.since.toISOString() },
          'Slack accepts the app’s token again: delivery resumed',
        );
      deps.resumed();
      return false;
    },
  };
}
