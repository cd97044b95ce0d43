import { entryPointOf, hoursOf, timeToDecision } from '../approvals/approval-report.ts';
import type { WorkingHours } from '../approvals/working-hours.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { ApprovalStores } from '../store/approval-stores.ts';

/**
 * The approval stores, counting what approvals do as it is recorded (whichever surface or replica
 * records it): a start by entry point and template, a decision by outcome with its time in working
 * hours, and the reply of a decision from when it was seen to when it was posted. Counted after
 * the store says it recorded the fact, so a fenced-off attempt counts nothing; a failed count
 * never fails what was recorded.
 */
export function observeApprovals(
  stores: ApprovalStores,
  metrics: Pick<Metrics, 'approvalStarted' | 'approvalDecided' | 'decisionReplied'>,
  deps: {
    hours: WorkingHours | undefined;
    logger: Logger;
    /** When the announcement was recorded (for a decision: when it was seen). */
    recordedAt: (announcementId: string) => Promise<Date | undefined>;
  },
): ApprovalStores {
  const zone = deps.hours?.defaultTimeZone ?? 'UTC';
  const quietly = (what: string, work: () => Promise<void>) =>
    work().catch((error: unknown) =>
      deps.logger.warn({ error: (error as Error).message }, `could not count ${what}`),
    );
  const observed: Partial<ApprovalStores> = {
    async createApproval(approval, now, chain) {
      await stores.createApproval(approval, now, chain);
      const { slack, request } = approval;
      const entryPoint = entryPointOf({ ...slack, againOf: request.againOf?.djbh ?? null });
      metrics.approvalStarted(entryPoint, request.template?.id ?? null);
    },
    async recordDecision(djbh, change, claim) {
      const recorded = await stores.recordDecision(djbh, change, claim);
      if (recorded && change.decision !== 'pending')
        await quietly('a decision', async () => {
          const approval = await stores.getApproval(djbh);
          const took =
            approval &&
            timeToDecision(
              {
                createdAt: approval.request.createdAt,
                decisionSeenAt: change.now,
                decision: change.decision,
              },
              deps.hours,
              zone,
            );
          metrics.approvalDecided(change.decision, took ? hoursOf(took.workingMs) : undefined);
        });
      return recorded;
    },
    async markAnnouncementSent(claim, posted, now, laneWaitMs) {
      const sent = await stores.markAnnouncementSent(claim, posted, now, laneWaitMs);
      // `<number>:decision:<approved|rejected>`: the decision's reply in the thread.
      if (sent && /:decision:(approved|rejected)$/.test(claim.id))
        await quietly('a decision reply', async () => {
          const seen = await deps.recordedAt(claim.id);
          if (seen) metrics.decisionReplied(Math.max(0, now.getTime() - seen.getTime()) / 1000);
        });
      return sent;
    },
  };
  return new Proxy(stores, {
    get: (target, property, receiver) =>
      property in observed
        ? observed[property as keyof ApprovalStores]
        : Reflect.get(target, property, receiver),
  });
}
