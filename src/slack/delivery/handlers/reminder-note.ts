import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { replyThread } from '../../../approvals/tracked-approval.ts';
import { buildReminderNote } from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/** The thread's note that the approver was reminded. */
export const deliverReminderNote: Handler = async (a, approval, attempt, kit) => {
  const thread = replyThread(approval);
  // Only worth saying in the thread; without one, the requester needs no note.
  if (!thread) return NOTHING_POSTED;
  const t = kit.languageAt(approval.slack.channelId, approval);
  // Named, not mentioned: the reminder is the approver's DM; the thread only says it went.
  const approver = await kit.readers.nameOf(attempt, approval, approval.parties.approver.login);
  const note = buildReminderNote(a, t, approver);
  return kit.poster.post(attempt, approval, approval.slack.channelId, note, a, thread);
};
