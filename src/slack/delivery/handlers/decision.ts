import { buildDecisionAnnouncement } from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/** The decision, replied in the thread (or the requester's DM). */
export const deliverDecision: Handler = async (a, approval, attempt, kit) => {
  // Credits whoever the service says decided, never the recorded approver's account when the
  // service gave the approval to someone else (decidedBy is its reported login).
  const decider = await kit.readers.personOf(attempt, approval, approval.outcome.decidedBy);
  return kit.replyOrDm(
    attempt,
    approval,
    (t) => buildDecisionAnnouncement(a, approval, t, decider),
    a,
  );
};
