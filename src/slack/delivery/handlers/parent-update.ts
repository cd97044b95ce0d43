import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { buildRequestMessage } from '../../blocks/request-message.ts';
import type { Handler } from './handler.ts';
import { chainProgress } from './step-notes.ts';

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
  const t = kit.languageAt(approval.slack.channelId, approval);
  const progress = await chainProgress(kit, attempt, approval, t);
  const message = buildRequestMessage(approval, t, kit.options.webListUrl, againLink, progress);
  return kit.poster.edit(attempt, a, { channel: approval.slack.channelId, ts }, message);
};
