import { AnnounceError, type Announcer } from './announcer.ts';
import type { ApprovalStore } from './approval-store.ts';
import type { Announcement } from './tracked-approval.ts';

export interface DispatcherDeps {
  store: ApprovalStore;
  announcer: Announcer;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** How long one delivery attempt holds an announcement; must outlast the slowest attempt. */
  leaseMs: number;
}

export interface DispatchCounts {
  sent: number;
  recovered: number;
  failed: number;
  waiting: number;
}

const BATCH = 50;
const MAX_ATTEMPTS = 8;

/**
 * Delivers pending announcements exactly once, even across crashes:
 * 1. The fact and its announcement were stored in one transaction (the outbox), so a crash before
 *    delivery leaves a pending announcement that the next pass delivers.
 * 2. Each attempt first claims the announcement with a lease and notes `attemptedAt`, so two
 *    passes (or replicas) never post it at the same time.
 * 3. Every post carries the announcement's id as message metadata. If a claimed announcement had
 *    an earlier attempt, that attempt may have posted and died before writing it down, so we look
 *    for a post carrying the id before posting again.
 * A crash between the post and the write therefore neither loses nor repeats the message.
 *
 * Calls are serialised within the process: one pass at a time.
 */
export function createAnnouncementDispatcher(deps: DispatcherDeps) {
  let running: Promise<DispatchCounts> = Promise.resolve({
    sent: 0,
    recovered: 0,
    failed: 0,
    waiting: 0,
  });

  async function pass(now: () => Date): Promise<DispatchCounts> {
    const counts: DispatchCounts = { sent: 0, recovered: 0, failed: 0, waiting: 0 };
    // The request message first: the rest refer to its thread.
    const pending = (await deps.store.pendingAnnouncements(BATCH)).sort(
      (a, b) => Number(b.kind === 'request') - Number(a.kind === 'request'),
    );
    for (const announcement of pending) {
      const approval = await deps.store.getApproval(announcement.djbh);
      if (!approval) continue;
      // Thread replies wait for the request message that starts the thread.
      if (needsThread(announcement) && !approval.messageTs) {
        counts.waiting++;
        continue;
      }
      if (!(await deps.store.claimAnnouncement(announcement.id, now(), deps.leaseMs))) continue;
      try {
        if (announcement.attemptedAt) {
          const earlier = await deps.announcer.findDelivered(announcement, approval);
          if (earlier) {
            await deps.store.markAnnouncementSent(announcement.id, earlier, now());
            counts.recovered++;
            deps.logger.info(
              { announcement: announcement.id },
              'announcement was already posted; recorded it',
            );
            continue;
          }
        }
        const posted = await deps.announcer.deliver(announcement, approval);
        await deps.store.markAnnouncementSent(announcement.id, posted, now());
        counts.sent++;
      } catch (error) {
        counts.failed++;
        const retryable = error instanceof AnnounceError ? error.retryable : false;
        const final = !retryable || announcement.attempts + 1 >= MAX_ATTEMPTS;
        const message = error instanceof Error ? error.message : String(error);
        await deps.store.markAnnouncementFailed(announcement.id, message, final);
        deps.logger.warn(
          { announcement: announcement.id, error: message, final },
          'announcement not delivered',
        );
      }
    }
    return counts;
  }

  return {
    /** Delivers what is pending; waits for a pass already under way, then runs its own. */
    deliverPending(now: () => Date = () => new Date()): Promise<DispatchCounts> {
      running = running.catch(() => undefined).then(() => pass(now));
      return running;
    },
  };
}

export type AnnouncementDispatcher = ReturnType<typeof createAnnouncementDispatcher>;

/** Everything but the request itself refers to the request's thread. */
function needsThread(announcement: Announcement): boolean {
  return announcement.kind !== 'request';
}
