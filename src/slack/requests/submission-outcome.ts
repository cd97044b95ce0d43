import { ApprovalServiceError } from '../../approval-service/approval-service-error.ts';
import { UnknownApproverError } from '../../approvals/service-directory.ts';
import { StoppingError } from '../../approvals/start-approval.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import { escapeMrkdwn } from '../blocks/request-message.ts';
import type { Messages } from '../i18n.ts';
import { isUserId } from '../ids.ts';

/**
 * Where the request message is: the asked channel (or a thread there), the requester's DM
 * instead, or not yet out. `asked` is a channel, or a person's id when their DM was asked for.
 */
export function where(approval: TrackedApproval | undefined, asked: string, t: Messages): string {
  if (!approval?.slack.messageTs) return t.postingSoon;
  // Asked for the DM, or run from the app's own DM: a channel mention of a DM reads oddly.
  if (isUserId(asked) || (asked.startsWith('D') && approval.slack.channelId === asked))
    return t.postedInOurDm;
  if (approval.slack.channelId !== asked) return t.postedInDmInstead(asked);
  if (approval.slack.threadTs) return t.postedInThread(approval.slack.channelId);
  return t.postedWhere(approval.slack.channelId);
}

/** The words a person needs when the service did not start their approval. */
export function explain(error: unknown, t: Messages, webUrl?: string): string {
  if (error instanceof StoppingError) return t.appRestarting;
  if (error instanceof UnknownApproverError)
    return t.approverUnknownToService(escapeMrkdwn(error.login));
  if (!(error instanceof ApprovalServiceError)) return t.somethingWrong;
  switch (error.kind) {
    case 'unavailable':
      return error.maybeCreated ? t.serviceMaybeCreated(webUrl) : t.serviceDown;
    case 'credentials':
      return t.serviceCredentials;
    case 'invalid-request':
      if (error.problem === 'too-long' || error.problem === 'unstorable') {
        const field = fieldName(error.field, t);
        return error.problem === 'too-long'
          ? t.serviceTooLong(field, error.limit)
          : t.serviceUnstorable(field);
      }
      return t.serviceRefused(escapeMrkdwn(error.serviceMessage ?? error.message));
    case 'rejected':
      return t.serviceRefused(escapeMrkdwn(error.serviceMessage ?? error.message));
    case 'protocol':
      return t.somethingWrong;
  }
}

/** The form's name for a field of the service's start request. */
function fieldName(field: string | undefined, t: Messages): string {
  switch (field) {
    case 'title':
      return t.titleLabel;
    case 'apply_note':
      return t.noteLabel;
    case 'special_approver':
      return t.approverLabel;
    default:
      return t.yourLogin;
  }
}
