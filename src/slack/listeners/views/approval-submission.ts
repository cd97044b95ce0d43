import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { ApprovalServiceError } from '../../../approval-service/approval-service-error.ts';
import { serviceLength } from '../../../approvals/acceptable-text.ts';
import {
  type DraftField,
  type DraftProblem,
  prepareApproval,
} from '../../../approvals/approval-request.ts';
import { type RequestTemplate, templateOverLimits } from '../../../approvals/request-templates.ts';
import { NotSavedError, startTrackedApproval } from '../../../approvals/start-approval.ts';
import { describe } from '../../../errors.ts';
import { settleWithin } from '../../../settle-within.ts';
import {
  appliedTemplate,
  buildApprovalModal,
  buildMessageModal,
  fieldBlock,
  parseModalMetadata,
  type TemplateOption,
} from '../../blocks/approval-modal.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK, CALLBACK, isDirectMessage, isUserId } from '../../ids.ts';
import { teamIdOf } from '../../people/team-of.ts';
import { resolveApprover } from '../../requests/approver-choice.ts';
import { explain, where } from '../../requests/submission-outcome.ts';
import type { StartingDeps } from '../../slack-deps.ts';

type Deps = StartingDeps;

/** How long the checks before the ack may take; Slack gives up on the ack at 3 s. */
export const ACK_BUDGET_MS = 2000;
type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

const FIELD_BLOCKS: Record<DraftField, string> = {
  title: BLOCK.title,
  note: BLOCK.note,
  approver: BLOCK.approver,
};

/**
 * The template the form was filled from, when the pick names a template of the channel the form
 * was opened in (the pick's id is only a claim). A removed template still counts: it was picked
 * while it was offered.
 */
async function templateOf(
  deps: Pick<Deps, 'templates'>,
  templateId: string | undefined,
  channelId: string,
): Promise<RequestTemplate | undefined> {
  if (!templateId || !channelId) return undefined;
  const template = await deps.templates.get(templateId);
  return template && template.channelId === channelId ? template : undefined;
}

/**
 * The field errors of a draft; a title or note too long because of the template's part (one saved
 * before its parts were counted as sent) names the template, which is what the person can change.
 */
function draftErrors(
  problems: Partial<Record<DraftField, DraftProblem>>,
  template: RequestTemplate | undefined,
  blockOf: (field: DraftField) => string,
  t: Messages,
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [field, problem] of Object.entries(problems))
    errors[blockOf(field as DraftField)] = t.problem(field as DraftField, problem);
  const over = template ? templateOverLimits(template) : {};
  for (const [field, part] of [
    ['title', 'titlePrefix'],
    ['note', 'noteSkeleton'],
  ] as const) {
    const problem = over[part];
    if (template && problems[field]?.code === 'too-long' && problem?.code === 'too-long')
      errors[blockOf(field)] = t.templateMakesTooLong(template.name, field, part, problem);
  }
  return errors;
}

/**
 * Submitting the request form: field problems go back as Slack field errors; a good draft turns
 * the modal into "starting…" at once (within Slack's 3 s), then the approval is started and the
 * modal says how it went. On failure the form comes back with everything the person typed.
 */
export function approvalSubmission(deps: Deps) {
  return async ({ ack, body, view, client }: Args): Promise<void> => {
    const metadata = parseModalMetadata(view.private_metadata);
    if (!metadata) {
      await ack();
      return;
    }
    const values = view.state.values;
    // A template's fill gives these fields new block ids (see ModalMetadata.revision).
    const blockOf = (field: DraftField) => fieldBlock(FIELD_BLOCKS[field], metadata.revision);
    const title = values[blockOf('title')]?.[ACTION.title]?.value ?? '';
    const note = values[blockOf('note')]?.[ACTION.note]?.value ?? '';
    const approverSlackId =
      values[blockOf('approver')]?.[ACTION.approver]?.selected_user ?? undefined;
    // Only a fill that was applied, and is still what the picker shows (see appliedTemplate).
    const templateId = appliedTemplate(metadata, values);
    const typedLogin =
      values[BLOCK.approverLogin]?.[ACTION.approverLogin]?.value?.trim() || undefined;
    // Opened from the ⚡ menu: the channel picked in the form, else the requester's DM.
    const picked = values[BLOCK.channel]?.[ACTION.channel]?.selected_conversation ?? undefined;
    const channelId = metadata.channelId || picked || body.user.id;

    /** Everything that can be decided before the ack: who asks, who approves, is the draft good. */
    const check = async () => {
      const requester = await deps.people.get(body.user.id);
      const t = messagesFor(requester.locale);
      const requesterLogin = await deps.identities.loginOf(body.user.id);
      if (!requesterLogin) {
        return {
          reply: {
            response_action: 'update' as const,
            view: buildMessageModal([t.requesterUnknown], t),
          },
        };
      }
      if (metadata.againOf) {
        // Two forms opened from one button: only the first submitted requests it again.
        const old = await deps.store.getApproval(metadata.againOf.djbh);
        if (old?.requestedAgainAs)
          return {
            reply: {
              response_action: 'update' as const,
              view: buildMessageModal([t.alreadyRequestedAgain(old.requestedAgainAs.djbh)], t),
            },
          };
      }
      const approver = await resolveApprover(deps, approverSlackId, typedLogin, metadata, t);
      if ('error' in approver) {
        const block = approver.block === BLOCK.approver ? blockOf('approver') : approver.block;
        return {
          reply: {
            response_action: 'errors' as const,
            errors: { [block]: approver.error },
          },
        };
      }
      const prepared = prepareApproval(
        { title, note, approverLogin: approver.login },
        requesterLogin,
        deps.textLimits,
      );
      const template = await templateOf(deps, templateId, metadata.channelId);
      if (!prepared.ok) {
        const errors = draftErrors(prepared.problems, template, blockOf, t);
        return { reply: { response_action: 'errors' as const, errors } };
      }
      const usedTemplate = template ? { id: template.id, name: template.name } : null;
      // Request again names the old request's channel, not one the person asks from now: it is
      // used only if they are in it now (its members would read the request), else their DM.
      const left =
        metadata.againOf && !isDirectMessage(channelId) && !isUserId(channelId)
          ? (await deps.access.postRequestIn(channelId, body.user.id)) !== 'allowed'
          : false;
      return { t, requester, approver, prepared, usedTemplate, left };
    };
    const fallbackT = messagesFor(deps.people.cached(body.user.id)?.locale);
    // The form the person typed, shown again with a banner saying what went wrong.
    const formAgain = (banner: string, lang = fallbackT) =>
      buildApprovalModal(
        {
          title,
          note,
          ...(approverSlackId ? { approverSlackId } : {}),
          ...(typedLogin
            ? { approverLogin: { value: typedLogin, hint: lang.approverLoginHint(typedLogin) } }
            : {}),
          info: [],
          banner,
          templates: templatesOffered(view.blocks, metadata.revision),
          metadata,
        },
        lang,
      );
    const checking = check().catch((error: unknown) => ({ failed: error }) as const);
    // Slack waits 3 s for the ack: the checks get a budget, past which the form says "checking…"
    // and the outcome (field problems, or the result) arrives by views.update.
    const early = await settleWithin(checking, ACK_BUDGET_MS);
    let acked = false;
    if (early === undefined) {
      await ack({
        response_action: 'update',
        view: buildMessageModal([fallbackT.checking], fallbackT),
      });
      acked = true;
    }
    const checked = early ?? (await checking);
    const show = (modal: ReturnType<typeof buildMessageModal>) =>
      client.views.update({ view_id: view.id, view: modal }).catch((error: unknown) => {
        deps.logger.warn({ error: describe(error), view: view.id }, 'could not update the modal');
      });
    // Keeps the form and everything typed in it: as a field error in the ack, or, once acked, as
    // the form shown again with a banner.
    const keepForm = async (message: string): Promise<void> => {
      if (!acked) return ack({ response_action: 'errors', errors: { [blockOf('note')]: message } });
      await show(formAgain(message));
    };
    if ('failed' in checked) {
      // Slack or the database failed us: keep the form and everything typed in it.
      deps.logger.warn(
        { error: describe(checked.failed), user: body.user.id },
        'could not check the approval form',
      );
      return keepForm(fallbackT.somethingWrong);
    }
    if ('reply' in checked && checked.reply) {
      const reply = checked.reply;
      if (!acked) return ack(reply);
      return void (await show(
        reply.response_action === 'errors'
          ? formAgain(fallbackT.fixAndResubmit(Object.values(reply.errors).join(' ')))
          : reply.view,
      ));
    }
    const { t, requester, approver, prepared, usedTemplate, left } = checked;
    const postIn = left ? body.user.id : channelId;
    // Acknowledged before the replay guard's write: a database that is slow or away (a lock held,
    // a failover, a full disk) must not hold Slack's 3 s.
    if (!acked) {
      await ack({ response_action: 'update', view: buildMessageModal([t.submitting], t) });
      acked = true;
    } else await show(buildMessageModal([t.submitting], t));
    // Taken only now that the submission is accepted; a replay reaching any replica stops here.
    const taken = await deps.submissions.take(view.id, deps.now()).catch((error: unknown) => {
      deps.logger.warn(
        { error: describe(error), code: (error as { code?: unknown })?.code, view: view.id },
        'replay guard unavailable (the database): nothing started',
      );
      return undefined;
    });
    // The database is away: nothing is started (it could not be recorded), the form comes back.
    if (taken === undefined) return keepForm(t.cannotStartNow);
    if (!taken) return;

    // After the ack nothing may throw unseen: every outcome ends in a modal the person can read.
    let djbh: string;
    try {
      ({ djbh } = await startTrackedApproval(deps, {
        input: prepared.input,
        teamId: teamIdOf(body),
        channelId: postIn,
        threadTs: postIn === metadata.channelId ? (metadata.threadTs ?? null) : null,
        againOf: metadata.againOf ?? null,
        template: usedTemplate,
        requesterSlackId: body.user.id,
        approverSlackId: approver.slackId ?? null,
        locale: requester.locale,
      }));
    } catch (error) {
      if (error instanceof NotSavedError) {
        deps.logger.error(
          { err: error.cause, djbh: error.djbh },
          'approval started but not stored',
        );
        await show(buildMessageModal([t.notSaved(error.djbh)], t));
        return;
      }
      deps.logger.warn({ error: describe(error), user: body.user.id }, 'approval not started');
      const limitTooHigh = noteLimitTooHigh(error, prepared.input.note);
      if (limitTooHigh) {
        // We let the note through at our limit and the service still found it too long.
        deps.logger.warn(
          { limit: deps.textLimits.note },
          'the service holds shorter notes than APPROVAL_NOTE_LIMIT says; set it to 5000 for installs that missed the schema update',
        );
      }
      // Nothing started: the person may submit the same form again.
      await deps.submissions.release(view.id).catch(() => undefined);
      await show(formAgain(explain(limitTooHigh ? withoutLimit(error) : error, t, deps.webUrl), t));
      return;
    }
    // Started: from here on the form must never come back, or a second submit would start a second approval.
    deps.logger.info({ djbh, user: body.user.id, changes: prepared.changes }, 'approval started');
    // Post first, so the modal can say where the request really went (the channel, or the DM);
    // when Slack is slow the modal says it will be posted shortly, and the outbox sees to it.
    deps.dispatcher.wake();
    const tracked = await requestPosted(deps.store, djbh, POSTED_WAIT_MS);
    const lines = [t.submitted(djbh), where(tracked, postIn, t)];
    if (left) lines.push(t.againNotInChannel(channelId));
    if (prepared.changes.length > 0)
      lines.push(t.changed(prepared.changes.map((c) => t.changeNames[c]).join('; ')));
    await show(buildMessageModal(lines, t));
  };
}

const POSTED_WAIT_MS = 4000;

/** The templates the form offered, to offer them again when it comes back with a banner. */
function templatesOffered(
  blocks: readonly unknown[],
  revision: number | undefined,
): TemplateOption[] {
  const picker = (blocks as Array<{ block_id?: string; element?: { options?: unknown } }>).find(
    (b) => b.block_id === fieldBlock(BLOCK.template, revision),
  );
  const options = (picker?.element?.options ?? []) as Array<{
    value: string;
    text: { text: string };
  }>;
  return options.map((o) => ({ id: o.value, name: o.text.text }));
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
async function requestPosted(store: Deps['store'], djbh: string, waitMs: number) {
  const until = performance.now() + waitMs;
  for (;;) {
    const approval = await store.getApproval(djbh).catch(() => undefined);
    if (approval?.messageTs || performance.now() > until) return approval;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function registerViews(app: App, deps: Deps): void {
  app.view(CALLBACK.approvalModal, approvalSubmission(deps));
}
