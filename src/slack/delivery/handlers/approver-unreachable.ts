import { buildApproverUnreachableReply } from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/** Tells the requester their approver cannot be reached, and offers Request again. */
export const deliverApproverUnreachable: Handler = async (a, approval, attempt, kit) => {
  // Never on Slack, or on Slack but deactivated or hidden: the requester is told which.
  const onSlack =
    Boolean(await kit.readers.slackUserOf(attempt, approval)) ||
    (await kit.readers.recordedAccountDeactivated(attempt, approval));
  return kit.replyOrDm(
    attempt,
    approval,
    (t) => buildApproverUnreachableReply(approval, t, onSlack),
    a,
  );
};
