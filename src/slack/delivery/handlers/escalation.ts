import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { buildLeaderDm } from '../../blocks/announcement-messages.ts';
import { messagesFor } from '../../i18n.ts';
import type { Reader } from '../poster.ts';
import { call, classOf } from '../slack-call.ts';
import type { Handler } from './handler.ts';

/**
 * The escalation DM to the approver's leader, in the leader's language: what the approver's DM
 * says (title, number, note) and the same links (the thread, the approval service), opened by who
 * has waited how long for whom. No button decides anything: only the approver can, in the
 * service. A leader Slack will not let us reach gets nothing, and nobody is told instead.
 */
export const deliverEscalation: Handler = async (a, approval, attempt, kit) => {
  const { poster, readers, options } = kit;
  const escalatedTo = approval.escalatedTo;
  if (!escalatedTo) return NOTHING_POSTED;
  // The leader by their login, on the account that is theirs now; none: nobody is told.
  const chatId = await readers.slackUserOf(attempt, approval, escalatedTo.login);
  if (!chatId) return NOTHING_POSTED;
  const to: Reader = { chatId, login: escalatedTo.login };
  try {
    attempt.check();
    const leader = await call('users.info', () => options.people.get(to.chatId));
    // Deactivated since they were chosen: a DM nobody reads is not an escalation.
    if (leader.presence.deactivated) return NOTHING_POSTED;
    const thread = approval.messageTs;
    const link = thread ? await poster.permalink(attempt, approval.channelId, thread) : undefined;
    // The wait is the approver's: counted in their working hours.
    const approverId = await readers.slackUserOf(attempt, approval).catch(() => null);
    const approverZone = approverId
      ? (options.people.cached(approverId)?.timeZone ??
        (await options.people.get(approverId).catch(() => undefined))?.timeZone)
      : undefined;
    const dm = buildLeaderDm(
      a,
      approval,
      messagesFor(leader.locale),
      {
        ...(link ? { thread: link } : {}),
        ...(options.webUrl ? { webUrl: options.webUrl } : {}),
      },
      kit.waitedMs(a, approval, approverZone),
    );
    return await poster.post(attempt, approval, to, dm, a);
  } catch (error) {
    if (classOf(error) !== 'fallback') throw error;
    return NOTHING_POSTED;
  }
};
