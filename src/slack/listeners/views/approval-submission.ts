import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { describe } from '../../../errors.ts';
import { buildApprovalModal, buildMessageModal } from '../../blocks/approval-modal.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import { teamIdOf } from '../../people/team-of.ts';
import { checkSubmission, type SubmissionCheck } from '../../requests/submission-check.ts';
import { type SubmissionStart, startSubmission } from '../../requests/submission-start.ts';
import { readSubmittedForm, type SubmittedForm } from '../../requests/submitted-form.ts';
import type { StartingDeps } from '../../slack-deps.ts';
import { ACK_BUDGET_MS, answerWithin, type ModalAnswer, modalAnswer } from '../answer-within.ts';

type Deps = StartingDeps;
type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

export { ACK_BUDGET_MS };

/**
 * Submitting the request form: read it (requests/submitted-form.ts), check it
 * (requests/submission-check.ts), start it (requests/submission-start.ts), and say how it went.
 * Field problems go back as Slack field errors; a good draft turns the modal into "starting…" at
 * once (within Slack's 3 s), and the modal then says how it went. On failure the form comes back
 * with everything the person typed.
 */
export function approvalSubmission(deps: Deps) {
  return async ({ ack, body, view, client }: Args): Promise<void> => {
    const form = readSubmittedForm(view, body.user.id);
    if (!form) return ack();
    const modal = modalAnswer({ ack, client, viewId: view.id, logger: deps.logger });
    const render = renderer(form, modal, messagesFor(deps.people.cached(body.user.id)?.locale));
    const checking = checkSubmission(deps, form).catch(
      (error: unknown) => ({ as: 'failed', error }) as const,
    );
    // Past the budget the form says "checking…"; the outcome (field problems, or the result)
    // then arrives by views.update.
    const { value: checked } = await answerWithin(checking, ACK_BUDGET_MS, () =>
      modal.show(buildMessageModal([render.fallbackT.checking], render.fallbackT)),
    );
    if (checked.as === 'failed') {
      // Slack or the database failed us: keep the form and everything typed in it.
      deps.logger.warn(
        { error: describe(checked.error), user: form.userId },
        'could not check the approval form',
      );
      return render.keepForm(render.fallbackT.somethingWrong);
    }
    if (checked.as !== 'ready') return render.problem(checked);
    const { t } = checked;
    // Answered before the replay guard's write: a database that is slow or away (a lock held, a
    // failover, a full disk) must not hold Slack's 3 s.
    await modal.show(buildMessageModal([t.submitting], t));
    const started = await startSubmission(deps, form, checked, {
      viewId: view.id,
      teamId: teamIdOf(body),
    });
    // After the ack nothing may throw unseen: every outcome ends in a modal the person can read.
    await render.outcome(started, t);
  };
}

/** What the modal shows for each outcome of the check and of the start. */
function renderer(form: SubmittedForm, modal: ModalAnswer, fallbackT: Messages) {
  // The form the person typed, shown again with a banner saying what went wrong.
  const formAgain = (banner: string, lang = fallbackT) =>
    buildApprovalModal(
      {
        title: form.title,
        note: form.note,
        ...(form.approverSlackId ? { approverSlackId: form.approverSlackId } : {}),
        ...(form.typedLogin
          ? {
              approverLogin: {
                value: form.typedLogin,
                hint: lang.approverLoginHint(form.typedLogin),
              },
            }
          : {}),
        info: [],
        banner,
        templates: form.templates,
        metadata: form.metadata,
      },
      lang,
    );
  // Keeps the form and everything typed in it: as a field error in the ack, or, once acked, as
  // the form shown again with a banner.
  const keepForm = async (message: string): Promise<void> => {
    if (!modal.acked)
      return modal.ack({ response_action: 'errors', errors: { [form.blockOf('note')]: message } });
    await modal.show(formAgain(message));
  };
  return {
    fallbackT,
    keepForm,
    async problem(checked: Exclude<SubmissionCheck, { as: 'ready' }>): Promise<void> {
      if (checked.as === 'message') return modal.show(buildMessageModal([checked.line], checked.t));
      if (!modal.acked) return modal.ack({ response_action: 'errors', errors: checked.errors });
      await modal.show(
        formAgain(fallbackT.fixAndResubmit(Object.values(checked.errors).join(' '))),
      );
    },
    async outcome(started: SubmissionStart, t: Messages): Promise<void> {
      switch (started.as) {
        // The database is away: nothing is started (it could not be recorded), the form comes back.
        case 'not-now':
          return keepForm(t.cannotStartNow);
        case 'replayed':
          return;
        case 'not-saved':
          return modal.show(buildMessageModal([t.notSaved(started.djbh)], t));
        case 'refused':
          return modal.show(formAgain(started.reason, t));
        case 'started':
          return modal.show(buildMessageModal(started.lines, t));
      }
    },
  };
}

export function registerViews(app: App, deps: Deps): void {
  app.view(CALLBACK.approvalModal, approvalSubmission(deps));
}
