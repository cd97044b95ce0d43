import { NOTHING_POSTED } from '../../../approvals/announcer.ts';
import type { SkipReason } from '../../../approvals/steps.ts';
import {
  buildStartStepReply,
  buildTextReply,
  escapeMrkdwn,
  personRef,
} from '../../blocks/request-message.ts';
import type { Messages } from '../../i18n.ts';
import type { Handler } from './handler.ts';

/*
 * What the thread of a request in several steps is told of a step nobody decided: skipped, a
 * start whose answer was lost, a step that could not start. Recorded on the latest started
 * step's approval, numbered by the step's position (the announcement's occurrence); the step's
 * approver and why are read from the chain as it goes out.
 */

/** The step the announcement is about, read from its chain; undefined when it is gone. */
const stepOf: (
  ...args: Parameters<Handler>
) => Promise<{ position: number; who: string; why: SkipReason | null } | undefined> = async (
  a,
  approval,
  attempt,
  kit,
) => {
  const found = await kit.options.chainOf?.(approval.djbh);
  const step = found?.steps.find((s) => s.position === a.occurrence);
  if (!step) return undefined;
  const who = step.approverLogin
    ? await kit.readers.nameOf(attempt, approval, step.approverLogin)
    : '';
  return { position: step.position, who, why: step.skipReason ?? null };
};

export const deliverStepSkipped: Handler = async (a, approval, attempt, kit) => {
  const step = await stepOf(a, approval, attempt, kit);
  if (!step) return NOTHING_POSTED;
  return kit.replyOrDm(
    attempt,
    approval,
    (t) => buildTextReply(t.stepSkipped(step.position, step.who, step.why ?? 'approved-earlier')),
    a,
  );
};

export const deliverStepUncertain: Handler = async (a, approval, attempt, kit) => {
  const step = await stepOf(a, approval, attempt, kit);
  if (!step) return NOTHING_POSTED;
  const requester = personRef(approval.parties.requester.slackId, approval.parties.requester.login);
  return kit.replyOrDm(
    attempt,
    approval,
    (t) =>
      buildStartStepReply(
        t.stepUncertain(requester, step.position, step.who),
        approval.djbh,
        step.position,
        t,
      ),
    a,
  );
};

export const deliverStepFailed: Handler = async (a, approval, attempt, kit) => {
  const step = await stepOf(a, approval, attempt, kit);
  if (!step) return NOTHING_POSTED;
  const requester = personRef(approval.parties.requester.slackId, approval.parties.requester.login);
  return kit.replyOrDm(
    attempt,
    approval,
    (t) => buildTextReply(t.chainStepFailed(requester, step.position, step.who)),
    a,
  );
};

/**
 * Where a request in several steps stands, for its request messages: the step under way (or the
 * last one reached) and its state, in `t`'s words; undefined for a request of one step.
 */
export async function chainProgress(
  kit: Parameters<Handler>[3],
  attempt: Parameters<Handler>[2],
  approval: Parameters<Handler>[1],
  t: Messages,
): Promise<string | undefined> {
  const found = await kit.options.chainOf?.(approval.djbh);
  if (!found || found.steps.length < 2) return undefined;
  const reached = [...found.steps].reverse().find((s) => s.state !== 'waiting');
  if (!reached) return undefined;
  // A decided step records its outcome: a decision, or how it ended without one.
  const state: string =
    reached.state === 'decided' ? (reached.decision ?? 'stopped') : reached.state;
  const word = state === 'ended' || state === 'vanished' || state === 'gave-up' ? 'stopped' : state;
  const who = reached.approverLogin
    ? escapeMrkdwn(await kit.readers.nameOf(attempt, approval, reached.approverLogin))
    : '…';
  return t.stepProgress(reached.position, found.steps.length, who, t.stepState[word] ?? word);
}
