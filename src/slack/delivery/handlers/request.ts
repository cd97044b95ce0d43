import { buildRequestMessage } from '../../blocks/request-message.ts';
import type { Messages } from '../../i18n.ts';
import { classOf } from '../slack-call.ts';
import type { Handler } from './handler.ts';
import { chainProgress } from './step-notes.ts';

/**
 * The request message, in the approval's conversation (in the thread it was asked into, if any);
 * when the app cannot post there, in the requester's DM with the app.
 */
export const deliverRequest: Handler = async (a, approval, attempt, kit) => {
  const { poster, readers, languageAt, options } = kit;
  // Its button leads to the approver's list: the approver is who acts on it in the service.
  const channel = approval.slack.channelId;
  const here = languageAt(channel, approval);
  const progress = await chainProgress(kit, attempt, approval, here);
  const request = (t: Messages) =>
    buildRequestMessage(approval, t, options.webListUrl, undefined, progress);
  try {
    const message = request(here);
    return await poster.post(
      attempt,
      approval,
      channel,
      message,
      a,
      approval.slack.threadTs ?? undefined,
    );
  } catch (error) {
    if (classOf(error) !== 'fallback') throw error;
    const requester = await readers.requesterOf(attempt, approval);
    return poster.post(
      attempt,
      approval,
      requester,
      request(languageAt(requester.chatId, approval)),
      a,
    );
  }
};
