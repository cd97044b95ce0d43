import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { announcementId } from '../../../approvals/tracked-approval.ts';
import { buildEscalationNote } from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/** Tells the requester in the thread that it was escalated, and to whom. */
export const deliverEscalationNote: Handler = async (a, approval, attempt, kit) => {
  const to = approval.followUp.escalatedTo;
  // Said only when the leader's DM went out: never "escalated" when nobody was told.
  const dm =
    to &&
    (await kit.options.sentPost?.(
      announcementId(approval.djbh, 'escalation', a.occurrence ?? undefined),
    ));
  if (!to || !dm) return NOTHING_POSTED;
  // Named, not mentioned: a mention would notify the leader a second time, beside their DM.
  const leader = await kit.readers.nameOf(attempt, approval, to.login);
  return kit.replyOrDm(attempt, approval, (t) => buildEscalationNote(a, approval, t, leader), a);
};
