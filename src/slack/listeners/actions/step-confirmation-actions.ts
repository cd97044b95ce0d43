import type {
  AllMiddlewareArgs,
  App,
  BlockButtonAction,
  SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { StoppingError } from '../../../approvals/start-approval.ts';
import {
  confirmationParties,
  type StepConfirmation,
  shownDigest,
  startText,
} from '../../../approvals/step-confirmation.ts';
import { describe } from '../../../errors.ts';
import { logFailure } from '../../../logger.ts';
import { escapeMrkdwn, FIELD_MAX } from '../../blocks/request-message.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION } from '../../ids.ts';
import type { SlackDeps, StartingDeps } from '../../slack-deps.ts';
import { startForStep } from '../../workflow/step-start.ts';

export type ConfirmationDeps = StartingDeps &
  Pick<SlackDeps, 'confirmations' | 'confirmer' | 'access'>;
type Deps = ConfirmationDeps;
type Args = SlackActionMiddlewareArgs<BlockButtonAction> & AllMiddlewareArgs;

/**
 * Start / Decline on the question a workflow step asked its requester. Only the requester may
 * answer (the access policy's `confirm-start`); anyone else is told so and nothing changes. The
 * answer is taken once, in the database, so a double click or two replicas start one approval.
 */
export function confirmationAnswer(deps: Deps, answer: 'start' | 'decline') {
  return async ({ ack, body, action, respond }: Args): Promise<void> => {
    await ack();
    const userId = body.user.id;
    const t = messagesFor((await deps.people.get(userId).catch(() => undefined))?.locale);
    // Only the clicker sees it. (A click without a response_url, as from a view, gets no answer.)
    const answerer = respond as typeof respond | undefined;
    const tell = async (text: string) =>
      answerer?.({ response_type: 'ephemeral', replace_original: false, text }).catch(
        () => undefined,
      );
    const executionId = action.value ?? '';
    try {
      await answerAs(deps, answer, executionId, userId, tell, t);
    } catch (error) {
      logFailure(deps.logger, error, { executionId, user: userId }, 'confirmation answer failed');
      await tell(t.somethingWrong);
    }
  };
}

/**
 * The answer of `userId` to the confirmation of run `executionId`, from a button in the DM or
 * the modal: Start starts it, Decline (DM) or Cancel (modal) ends the step with its reason.
 * Anyone but the requester is told so, through `tell`, and nothing changes.
 */
export async function answerAs(
  deps: Deps,
  answer: 'start' | 'decline' | 'cancel',
  executionId: string,
  userId: string,
  tell: (text: string) => Promise<unknown>,
  t: Messages,
): Promise<void> {
  const confirmation = executionId ? await deps.confirmations.get(executionId) : undefined;
  if (!confirmation) return void (await tell(t.confirmGone));
  const verdict = await deps.access.check(
    'confirm-start',
    confirmationParties(confirmation),
    userId,
  );
  if (verdict !== 'allowed') {
    deps.logger.warn(
      { executionId, user: userId },
      'someone other than the requester answered a workflow step’s confirmation',
    );
    return void (await tell(t.confirmOnlyRequester(`<@${confirmation.requesterChatId}>`)));
  }
  const answering = { c: confirmation, theirs: messagesFor(confirmation.locale), tell, t };
  return answer === 'start' ? start(deps, answering) : decline(deps, answering, answer);
}

/** One answer being handled: the confirmation, the requester's language, and the clicker's. */
interface Answering {
  c: StepConfirmation;
  theirs: Messages;
  /** Tells the clicker alone. */
  tell: (text: string) => Promise<unknown>;
  t: Messages;
}

async function decline(
  deps: Deps,
  { c, theirs, tell, t }: Answering,
  how: 'decline' | 'cancel',
): Promise<void> {
  const reason = how === 'decline' ? theirs.stepDeclined : theirs.stepCancelled;
  if (!(await deps.confirmations.answer(c.executionId, 'declined', deps.now(), reason)))
    return void (await tell(t.confirmGone));
  const declined: StepConfirmation = { ...c, state: 'declined', reason };
  await deps.confirmer.showOutcome(declined, theirs.confirmDeclined);
  await deps.confirmer.closeStep(declined);
}

async function start(deps: Deps, { c, theirs, tell, t }: Answering): Promise<void> {
  if (!(await deps.confirmations.answer(c.executionId, 'starting', deps.now())))
    return void (await tell(t.confirmGone));
  await startConfirmed(deps, c, theirs);
}

/** How many Starts one sweep takes over from stopped replicas. */
const RESUME_BATCH = 20;

/**
 * Starts what requesters pressed Start on while the replica they reached was stopping (left
 * `confirmed`): each is claimed by one replica and started as the button would have. Runs with
 * the sweep of confirmations; returns how many it took.
 */
export async function resumeConfirmedStarts(deps: Deps, now: Date): Promise<number> {
  const claimed = await deps.confirmations.claimConfirmed(now, RESUME_BATCH);
  for (const c of claimed) {
    deps.logger.info(
      { executionId: c.executionId },
      'starting a Start a stopping replica handed on',
    );
    await startConfirmed(deps, c, messagesFor(c.locale));
  }
  return claimed.length;
}

/** A confirmation this caller moved to `starting`: starts it, and settles it with the outcome. */
async function startConfirmed(deps: Deps, c: StepConfirmation, theirs: Messages): Promise<void> {
  const requester = await deps.people.get(c.requesterChatId).catch(() => undefined);
  let refusal: string | undefined;
  try {
    refusal = requester
      ? await startForStep(
          deps,
          {
            executionId: c.executionId,
            teamId: c.teamId,
            requester: c.requesterChatId,
            approver: c.approverChatId,
            title: c.title,
            note: c.note,
            channel: c.channelId,
            // A question an older release asked (no digest) was shown whole only if it fit then.
            shownDigest: c.shownDigest ?? legacyDigest(c),
            ...(c.laterSteps ? { laterSteps: c.laterSteps } : {}),
          },
          requester,
          theirs,
        )
      : theirs.somethingWrong;
  } catch (error) {
    if (error instanceof StoppingError) {
      // Nothing started, and the run cannot be submitted again: another replica (or this one's
      // next start) starts it from the database.
      await deps.confirmations.defer(c.executionId);
      deps.logger.info({ executionId: c.executionId }, 'stopping: a Start is handed on');
      return;
    }
    deps.logger.warn({ error: describe(error), executionId: c.executionId }, 'start failed');
    refusal = theirs.somethingWrong;
  }
  if (refusal === undefined) {
    await deps.confirmations.settle(c.executionId, 'started');
    deps.dispatcher.wake();
    await deps.confirmer.showOutcome(c, theirs.confirmStarted);
    return;
  }
  await deps.confirmations.settle(c.executionId, 'failed', refusal);
  const failed: StepConfirmation = { ...c, state: 'failed', reason: refusal };
  await deps.confirmer.showOutcome(failed, theirs.confirmFailed(refusal));
  await deps.confirmer.closeStep(failed);
}

/**
 * The digest of what a question asked before digests were recorded showed: its title and note
 * when they fit the fields it had (1,000 and 1,980 characters escaped), else nothing matches and
 * nothing starts (it was shown cut). That release stored the step's inputs as given and adapted
 * them at Start like every request (startText: trimmed, `'` as `’`, emoji by name), so the digest
 * is of them adapted: else any such question with an apostrophe or a trailing newline, shown
 * whole, would be refused, and a workflow run cannot be submitted again.
 */
function legacyDigest(c: StepConfirmation): string {
  const whole =
    escapeMrkdwn(c.title).length <= 1000 && escapeMrkdwn(c.note).length <= FIELD_MAX - 20;
  return whole ? shownDigest(startText(c.title), startText(c.note)) : 'shown-cut';
}

export function registerConfirmationActions(app: App, deps: Deps): void {
  app.action<BlockButtonAction>(ACTION.confirmStart, confirmationAnswer(deps, 'start'));
  app.action<BlockButtonAction>(ACTION.confirmDecline, confirmationAnswer(deps, 'decline'));
}
