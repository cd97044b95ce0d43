import { AppError } from '../errors.ts';
import { addLogField } from '../log-context.ts';
import type { ApprovalService, StartApprovalInput } from './approval-types.ts';
import { checkApprover, UnknownApproverError } from './service-directory.ts';
import type { NewChain } from './steps.ts';
import type { NewTrackedApproval } from './tracked-approval.ts';

export interface StartRequest {
  input: StartApprovalInput;
  teamId: string;
  /** A channel, a DM, or a person's id for their DM with the app. */
  channelId: string;
  /** The thread the request is to join (a message shortcut's message). */
  threadTs?: string | null;
  /** The Workflow Builder step to complete when the approval ends. */
  functionExecutionId?: string | null;
  /** The approval this is a request again of ("Request again"). */
  againOf?: { djbh: string; link: string | null } | null;
  /** The channel template the request was made from. */
  template?: { id: string; name: string } | null;
  /** The request's later steps (steps.ts): this approval is their first step. */
  chain?: NewChain;
  requesterSlackId: string;
  approverSlackId: string | null;
  locale: string;
}

/** The service started the approval but we could not record it: the person must be told. */
export class NotSavedError extends AppError {
  readonly djbh: string;

  constructor(djbh: string, cause: unknown) {
    super(
      'approval_not_saved',
      `Approval ${djbh} was started in the service but could not be stored`,
      { cause },
    );
    this.djbh = djbh;
  }
}

/**
 * This replica is stopping and could not wait for a call to the service and its recording: the
 * approval is not started (a start whose answer is cut off would exist upstream only).
 */
export class StoppingError extends AppError {
  constructor() {
    super('app_stopping', 'The app is restarting; the approval was not started');
  }
}

/**
 * Starts the approval in the service, then records it with its announcements in one transaction.
 * Throws UnknownApproverError (nothing started) when the service's directory does not know the
 * approver: nobody could ever decide such an approval. Entry points check earlier (see
 * checkApprover) to say so on the form; this is the guarantee that no such login is sent.
 * Throws ApprovalServiceError when the service refuses (nothing stored), NotSavedError when the
 * store fails after the service accepted, StoppingError (nothing started) when `mayStart` says
 * this replica is stopping too soon to see the start through.
 */
export async function startTrackedApproval(
  deps: {
    service: Pick<ApprovalService, 'startApproval' | 'getDepartment'>;
    store: {
      createApproval(approval: NewTrackedApproval, now: Date, chain?: NewChain): Promise<void>;
    };
    now: () => Date;
    /** False once a stop leaves too little time for a call to the service and its recording. */
    mayStart?: () => boolean;
  },
  request: StartRequest,
): Promise<{ djbh: string }> {
  if (deps.mayStart && !deps.mayStart()) throw new StoppingError();
  if ((await checkApprover(deps.service, request.input.approver)) === 'unknown')
    throw new UnknownApproverError(request.input.approver);
  const { djbh } = await deps.service.startApproval(request.input);
  // From here on, every line this request writes names the approval.
  addLogField('djbh', djbh);
  const now = deps.now();
  try {
    await deps.store.createApproval(
      {
        djbh,
        teamId: request.teamId,
        request: {
          title: request.input.title,
          note: request.input.note,
          locale: request.locale,
          createdAt: now,
          ...(request.againOf ? { againOf: request.againOf } : {}),
          ...(request.template ? { template: request.template } : {}),
        },
        parties: {
          requester: { login: request.input.requester, slackId: request.requesterSlackId },
          approver: { login: request.input.approver, slackId: request.approverSlackId },
        },
        slack: {
          channelId: request.channelId,
          threadTs: request.threadTs ?? null,
          functionExecutionId: request.functionExecutionId ?? null,
        },
      },
      now,
      ...(request.chain ? [request.chain] : []),
    );
  } catch (error) {
    throw new NotSavedError(djbh, error);
  }
  return { djbh };
}
