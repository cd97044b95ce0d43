import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { buildRequestMessage } from '../../blocks/request-message.ts';
import type { Handler } from './handler.ts';

/** The request message, edited to show the latest state. */
export const deliverParentUpdate: Handler = async (a, approval, attempt, kit) => {
  // Editing is idempotent: it always shows the latest state, whichever change queued it.
  const ts = approval.slack.messageTs;
  if (!ts) return NOTHING_POSTED;
  // The new request's link, where the message names it (posted in the same conversation).
  const again = approval.request.requestedAgainAs?.message;
  const againLink =
    again && again.channelId === approval.slack.channelId
      ? await kit.poster.permalink(attempt, again.channelId, again.ts)
      : undefined;
  const message = buildRequestMessage(
    approval,
    kit.languageAt(approval.slack.channelId, approval),
    kit.options.webListUrl,
    againLink,
  );
  return kit.poster.edit(attempt, a, { channel: approval.slack.channelId, ts }, message);
};
