import { ApprovalServiceError } from '../../approval-service/approval-service-error.ts';
import { serviceLength } from '../../approvals/acceptable-text.ts';
import { NotSavedError, startTrackedApproval } from '../../approvals/start-approval.ts';
import { describe } from '../../errors.ts';
import type { StartingDeps } from '../slack-deps.ts';
import type { ReadySubmission } from './submission-check.ts';
import { explain, where } from './submission-outcome.ts';
import type { SubmittedForm } from './submitted-form.ts';

/*
 * Starting a checked request form's approval, once: the replay guard taken, the service asked,
 * the request message awaited so the person can be told where it went. Words, not views: the
 * listener renders the outcome.
 */

export type SubmissionStart =
  /** The replay guard could not be taken (the database is away): nothing started. */
  | { as: 'not-now' }
  /** Another delivery of this same submission took it: it answers. */
  | { as: 'replayed' }
  /** The service started it but it could not be stored. */
  | { as: 'not-saved'; djbh: string }
  /** Nothing started: the person may submit the same form again, told why. */
  | { as: 'refused'; reason: string }
  /** Started: what the modal says (its number, where it was posted, what was changed). */
  | { as: 'started'; djbh: string; lines: string[] };

const POSTED_WAIT_MS = 4000;

export async function startSubmission(
  deps: StartingDeps,
  form: SubmittedForm,
  ready: ReadySubmission,
  request: { viewId: string; teamId: string },
): Promise<SubmissionStart> {
  const { viewId } = request;
  // Taken only now that the submission is accepted; a replay reaching any replica stops here.
  const taken = await deps.submissions.take(viewId, deps.now()).catch((error: unknown) => {
    deps.logger.warn(
      { error: describe(error), code: (error as { code?: unknown })?.code, view: viewId },
      'replay guard unavailable (the database): nothing started',
    );
    return undefined;
  });
  if (taken === undefined) return { as: 'not-now' };
  if (!taken) return { as: 'replayed' };
  const postIn = ready.left ? form.userId : form.channelId;
  let djbh: string;
  try {
    ({ djbh } = await startTrackedApproval(deps, {
      input: ready.prepared.input,
      teamId: request.teamId,
      channelId: postIn,
      threadTs: postIn === form.metadata.channelId ? (form.metadata.threadTs ?? null) : null,
      againOf: form.metadata.againOf ?? null,
      template: ready.usedTemplate,
      ...(ready.usedTemplate?.laterSteps
        ? { chain: { laterSteps: ready.usedTemplate.laterSteps } }
        : {}),
      requesterSlackId: form.userId,
      approverSlackId: ready.approver.slackId ?? null,
      locale: ready.requester.locale,
    }));
  } catch (error) {
    return notStarted(deps, form, ready, viewId, error);
  }
  return started(deps, form, ready, djbh, postIn);
}

async function notStarted(
  deps: StartingDeps,
  form: SubmittedForm,
  ready: ReadySubmission,
  viewId: string,
  error: unknown,
): Promise<SubmissionStart> {
  if (error instanceof NotSavedError) {
    deps.logger.error({ err: error.cause, djbh: error.djbh }, 'approval started but not stored');
    return { as: 'not-saved', djbh: error.djbh };
  }
  deps.logger.warn({ error: describe(error), user: form.userId }, 'approval not started');
  const limitTooHigh = noteLimitTooHigh(error, ready.prepared.input.note);
  if (limitTooHigh) {
    // We let the note through at our limit and the service still found it too long.
    deps.logger.warn(
      { limit: deps.textLimits.note },
      'the service holds shorter notes than APPROVAL_NOTE_LIMIT says; set it to 5000 for installs that missed the schema update',
    );
  }
  // Nothing started: the person may submit the same form again.
  await deps.submissions.release(viewId).catch(() => undefined);
  const shown = limitTooHigh ? withoutLimit(error) : error;
  return { as: 'refused', reason: explain(shown, ready.t, deps.webUrl) };
}

async function started(
  deps: StartingDeps,
  form: SubmittedForm,
  ready: ReadySubmission,
  djbh: string,
  postIn: string,
): Promise<SubmissionStart> {
  const { t, prepared } = ready;
  // Started: from here on the form must never come back, or a second submit would start a second approval.
  deps.logger.info({ djbh, user: form.userId, changes: prepared.changes }, 'approval started');
  // Post first, so the modal can say where the request really went (the channel, or the DM);
  // when Slack is slow the modal says it will be posted shortly, and the outbox sees to it.
  deps.dispatcher.wake();
  const tracked = await requestPosted(deps.store, djbh, POSTED_WAIT_MS);
  const lines = [t.submitted(djbh), where(tracked, postIn, t)];
  if (ready.left) lines.push(t.againNotInChannel(form.channelId));
  if (prepared.changes.length > 0)
    lines.push(t.changed(prepared.changes.map((c) => t.changeNames[c]).join('; ')));
  return { as: 'started', djbh, lines };
}

/** The service refused a note that was within the limit we were configured with. */
function noteLimitTooHigh(error: unknown, note: string): error is ApprovalServiceError {
  return (
    error instanceof ApprovalServiceError &&
    error.problem === 'too-long' &&
    error.field === 'apply_note' &&
    error.limit !== undefined &&
    serviceLength(note) <= error.limit
  );
}

/** The same refusal without a limit we know to be wrong. */
function withoutLimit(error: ApprovalServiceError): ApprovalServiceError {
  return new ApprovalServiceError(error.message, {
    kind: error.kind,
    endpoint: error.endpoint,
    ...(error.field ? { field: error.field } : {}),
    ...(error.problem ? { problem: error.problem } : {}),
  });
}

/** The approval once its request message is posted, or as it stands after `waitMs`. */
async function requestPosted(store: StartingDeps['store'], djbh: string, waitMs: number) {
  const until = performance.now() + waitMs;
  for (;;) {
    const approval = await store.getApproval(djbh).catch(() => undefined);
    if (approval?.slack.messageTs || performance.now() > until) return approval;
    await new Promise((r) => setTimeout(r, 50));
  }
}
