/**
 * The fleet-wide pause of delivery (Slack refuses the app's token). Implemented with Kysely in
 * src/store; the outbox's `deliverable` honours it on every replica.
 */
export interface DeliveryPause {
  /**
   * Stops delivery across the fleet (Slack refuses the app's token): `deliverable` returns nothing
   * on any replica until resumeDelivery. True when this call paused it (it was running).
   */
  pauseDelivery(reason: string, now: Date): Promise<boolean>;
  /**
   * Lets delivery run again; true when it was paused. The retry window of every pending
   * announcement is moved on by how long the pause lasted (on the database's clock), or by its
   * own age at `now` if it is younger: time paused is not time failed.
   */
  resumeDelivery(now: Date): Promise<boolean>;
  /** Why and since when delivery is paused; undefined while it runs. */
  deliveryPause(): Promise<{ reason: string; since: Date } | undefined>;
}
