import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { buildHandedOverNote } from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/** The service gave the approval to someone else: who had it and who has it now, in the thread. */
export const deliverHandedOver: Handler = async (a, approval, attempt, kit) => {
  const { readers } = kit;
  const before = approval.parties.formerApprovers.at(-1);
  // Handed on again before this went out: the approval knows only the latest handover, which its
  // own note tells; this one would name the wrong people.
  if (!before?.login || a.occurrence !== approval.parties.approver.term) {
    kit.options.logger?.info(
      { announcement: a.id, term: approval.parties.approver.term },
      'handed over again before the note went out; the latest note tells it',
    );
    return NOTHING_POSTED;
  }
  // Named, not mentioned: the new approver hears in their DM; the one before is done.
  const from = await readers.nameOf(attempt, approval, before.login);
  const next = await readers.personOf(attempt, approval);
  const to = next.chatId
    ? await readers.plainName(attempt, next.chatId, approval.parties.approver.login)
    : approval.parties.approver.login;
  return kit.replyOrDm(attempt, approval, (t) => buildHandedOverNote(t, from, to), a);
};
