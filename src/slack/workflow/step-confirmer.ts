import type { WebClient } from '@slack/web-api';
import { askerOf, mayReach } from '../../approvals/audience.ts';
import {
  confirmationParties,
  type NewStepConfirmation,
  STARTING_STUCK_MS,
  type StepConfirmation,
  type StepConfirmations,
} from '../../approvals/step-confirmation.ts';
import { describe } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import {
  buildConfirmationMessage,
  buildConfirmationModal,
  buildConfirmationOutcome,
} from '../blocks/confirmation-message.ts';
import { messagesFor } from '../i18n.ts';

// Slack's answers when nothing more is owed: the step already ended (the workflow was cancelled,
// or an earlier call got through), or Slack no longer knows the run at all (deleted with its
// workflow, or older than Slack keeps runs). Either way the step is closed and later purged,
// instead of asked again at every pass.
const STEP_OVER = new Set(['execution_not_in_running_state', 'function_execution_not_found']);
const CLOSE_BATCH = 50;
// A DM to the requester needs nobody's membership.
const NOBODY_LISTED = { isMember: async () => false };

/**
 * Asks a requester to confirm a workflow step run by someone else, and ends the step when they
 * decline, do not answer in time, or the approval cannot start. Uses the bot token throughout:
 * the step's own token is short-lived, and the answer may come an hour later.
 */
export interface StepConfirmer {
  /**
   * Records the question and posts it to the requester's DM. False when it could not be posted:
   * the step has then been ended with an error saying so.
   */
  ask(confirmation: NewStepConfirmation): Promise<boolean>;
  /**
   * For a requester who ran the workflow: records the question and opens it as a modal with the
   * run's `interactivity_pointer` (through `client`, the step's own). When the modal cannot be
   * opened (the pointer is a few seconds old, or anything else), asks in the DM as `ask` does.
   */
  askInPlace(
    confirmation: NewStepConfirmation,
    pointer: string,
    client: WebClient,
  ): Promise<boolean>;
  /** Ends the step with the confirmation's reason; left owed (for the next sweep) when Slack fails. */
  closeStep(confirmation: StepConfirmation): Promise<void>;
  /** Replaces the question in the DM by what became of it (best effort). */
  showOutcome(confirmation: StepConfirmation, outcome: string): Promise<void>;
  /** One pass at `now`: expires unanswered questions, and ends steps still owed their error. */
  sweep(now: Date): Promise<{ expired: number; closed: number }>;
  /** The time the requester has to answer, in minutes, as the question says it. */
  minutes: number;
}

export function createStepConfirmer(deps: {
  client: WebClient;
  confirmations: StepConfirmations;
  logger: Logger;
  confirmMs: number;
}): StepConfirmer {
  const minutes = Math.round(deps.confirmMs / 60_000);

  async function closeStep(c: StepConfirmation): Promise<boolean> {
    try {
      await deps.client.functions.completeError({
        function_execution_id: c.executionId,
        error: c.reason ?? messagesFor(c.locale).somethingWrong,
      });
    } catch (error) {
      if (!STEP_OVER.has((error as { data?: { error?: string } }).data?.error ?? '')) {
        deps.logger.warn(
          { error: describe(error), executionId: c.executionId },
          'could not end the workflow step; will try again',
        );
        return false;
      }
    }
    await deps.confirmations.markClosed(c.executionId);
    return true;
  }

  async function showOutcome(c: StepConfirmation, outcome: string): Promise<void> {
    if (!c.askedIn) return;
    const message = buildConfirmationOutcome(c, outcome, messagesFor(c.locale));
    await deps.client.chat
      .update({ channel: c.askedIn.channel, ts: c.askedIn.ts, ...message })
      .catch((error: unknown) => {
        deps.logger.warn(
          { error: describe(error), executionId: c.executionId },
          'could not update the confirmation message',
        );
      });
  }

  const stored = (c: NewStepConfirmation): StepConfirmation => ({
    ...c,
    state: 'pending',
    reason: null,
    askedIn: null,
    stepClosed: false,
  });

  /** Posts the recorded question to the requester's DM; ends the step when it cannot. */
  async function askInDm(c: NewStepConfirmation): Promise<boolean> {
    const message = buildConfirmationMessage(stored(c), messagesFor(c.locale), minutes);
    try {
      // It shows the title and note: the audience rule, as for every message the app sends.
      const verdict = await mayReach(
        { kind: 'dm', person: { chatId: c.requesterChatId, login: null } },
        'title-and-note',
        {
          parties: confirmationParties(c),
          conversation: c.requesterChatId,
          requester: askerOf({ chatId: c.requesterChatId, login: null }),
        },
        NOBODY_LISTED,
      );
      if (verdict !== 'allowed') throw new Error(`audience ${verdict}`);
      // A user id as channel: the app's DM with that person.
      const posted = await deps.client.chat.postMessage({
        channel: c.requesterChatId,
        ...message,
      });
      if (posted.channel && posted.ts)
        await deps.confirmations.recordAsked(c.executionId, {
          channel: posted.channel,
          ts: posted.ts,
        });
      return true;
    } catch (error) {
      deps.logger.warn(
        { error: describe(error), executionId: c.executionId },
        'could not ask the requester to confirm a workflow step',
      );
      const reason = messagesFor(c.locale).stepNotAsked;
      if (await deps.confirmations.answer(c.executionId, 'failed', c.createdAt, reason))
        await closeStep({ ...stored(c), state: 'failed', reason });
      return false;
    }
  }

  return {
    minutes,
    async ask(c) {
      await deps.confirmations.create(c);
      return askInDm(c);
    },
    async askInPlace(c, pointer, client) {
      await deps.confirmations.create(c);
      try {
        await client.views.open({
          interactivity_pointer: pointer,
          view: buildConfirmationModal(stored(c), messagesFor(c.locale)),
        });
        return true;
      } catch (error) {
        deps.logger.info(
          { error: describe(error), executionId: c.executionId },
          'could not open the confirmation modal of a workflow step; asking in a DM',
        );
        return askInDm(c);
      }
    },
    closeStep: async (c) => {
      await closeStep(c);
    },
    showOutcome,
    async sweep(now) {
      const expired = await deps.confirmations.expire(now, (c) =>
        messagesFor(c.locale).stepExpired(minutes),
      );
      for (const c of expired) await showOutcome(c, messagesFor(c.locale).confirmExpired);
      // A Start the app stopped in the middle of: settled by what the database holds.
      const recovered = await deps.confirmations.recoverStarting(
        new Date(now.getTime() - STARTING_STUCK_MS),
        (c) => messagesFor(c.locale).stepStartInterrupted,
      );
      for (const c of recovered.started) {
        deps.logger.info({ executionId: c.executionId }, 'an interrupted Start had started');
        await showOutcome(c, messagesFor(c.locale).confirmStarted);
      }
      for (const c of recovered.failed) {
        deps.logger.warn({ executionId: c.executionId }, 'an interrupted Start ends its step');
        await showOutcome(c, messagesFor(c.locale).confirmFailed(c.reason ?? ''));
      }
      let closed = 0;
      for (const c of await deps.confirmations.unclosed(CLOSE_BATCH))
        if (await closeStep(c)) closed++;
      return { expired: expired.length, closed };
    },
  };
}
