import {
  buildEndedReply,
  buildGaveUpReply,
  buildVanishedReply,
} from '../../blocks/announcement-messages.ts';
import type { Handler } from './handler.ts';

/*
 * The replies that say the app stopped following an approval without a decision: each only words
 * in the thread (or the requester's DM), with nothing to look up first.
 */

/** Followed for GIVE_UP_AFTER_DAYS without a decision. */
export const deliverGaveUp: Handler = (a, approval, attempt, kit) =>
  kit.replyOrDm(attempt, approval, (t) => buildGaveUpReply(t, kit.options.giveUpAfterDays), a);

/** The service closed the approval without a decision. */
export const deliverEnded: Handler = (a, approval, attempt, kit) =>
  kit.replyOrDm(attempt, approval, (t) => buildEndedReply(approval, t), a);

/** The service has not known the approval number for a day. */
export const deliverVanished: Handler = (a, approval, attempt, kit) =>
  kit.replyOrDm(attempt, approval, (t) => buildVanishedReply(approval, t), a);
