import { checkApprover } from './service-directory.ts';
import { MAX_LATER_STEPS, parseStepRules, type StepRule, type StepsProblem } from './steps.ts';

/*
 * The later steps a Workflow Builder step names in its `later_steps` input (manifest.yml): what a
 * workflow author can type there, and what the app refuses before asking anyone. The steps are
 * those of a template's "Then also ask" (steps.ts), so a workflow's request in several steps runs
 * as a template's does: each step its own approval, started once the one before is approved.
 *
 * What the author types: one step a line, or several on a line separated by commas (`,`, `，`,
 * `、` or `;`); each a service login (a leading `@` dropped), a person inserted from a workflow
 * variable (Slack writes it `<@U…>`: their login is looked up when the step runs), or a leader
 * rule's words (`nearest leader`, `second-level leader`, `product-line leader`, or
 * 直属领导, 二级领导, 产品线领导). Blank items are ignored.
 */

/** One step as typed: a rule, or a Slack user whose login is looked up when the step runs. */
export type TypedStep = { kind: 'rule'; rule: StepRule } | { kind: 'slack-user'; chatId: string };

export type LaterStepsProblem =
  | StepsProblem
  /** A Slack user inserted from a variable the app cannot find a login for. */
  | { code: 'no-login'; chatId: string }
  /** A login the service's directory does not know. */
  | { code: 'unknown-login'; login: string };

const SEPARATORS = /[\n,，、;；]/;
const MENTION = /^<@([UW][A-Z0-9]+)(?:\|[^>]*)?>$/;

/** The input as typed, read into steps (no lookups); a problem names the first item refused. */
export function parseLaterSteps(
  text: string,
): { ok: true; steps: TypedStep[] } | { ok: false; problem: StepsProblem } {
  const items = text
    .split(SEPARATORS)
    .map((i) => i.trim())
    .filter((i) => i !== '');
  if (items.length > MAX_LATER_STEPS)
    return { ok: false, problem: { code: 'too-many', limit: MAX_LATER_STEPS } };
  const steps: TypedStep[] = [];
  for (const item of items) {
    const mention = MENTION.exec(item);
    if (mention) {
      steps.push({ kind: 'slack-user', chatId: mention[1] as string });
      continue;
    }
    // One item, one line: the words are steps.ts's, as a template's steps field takes them.
    const parsed = parseStepRules(item);
    if (!parsed.ok) return parsed;
    steps.push({ kind: 'rule', rule: parsed.rules[0] as StepRule });
  }
  return { ok: true, steps };
}

export interface LaterStepsLookups {
  /** The login of a Slack user (identities), or null when the app knows none. */
  loginOf(chatId: string): Promise<string | null>;
  service: Parameters<typeof checkApprover>[0];
}

/**
 * The steps as they will be recorded: each Slack user by their login, and each login checked
 * with the service's directory (one it does not know could never decide; one it could not check
 * now is let through, and the step's start will tell). Leader rules are resolved when their step
 * starts, as a template's are.
 */
export async function resolveLaterSteps(
  steps: readonly TypedStep[],
  lookups: LaterStepsLookups,
): Promise<{ ok: true; rules: StepRule[] } | { ok: false; problem: LaterStepsProblem }> {
  const rules: StepRule[] = [];
  for (const step of steps) {
    let rule: StepRule;
    if (step.kind === 'slack-user') {
      const login = await lookups.loginOf(step.chatId).catch(() => null);
      if (!login) return { ok: false, problem: { code: 'no-login', chatId: step.chatId } };
      rule = { kind: 'person', login };
    } else rule = step.rule;
    if (rule.kind === 'person' && (await checkApprover(lookups.service, rule.login)) === 'unknown')
      return { ok: false, problem: { code: 'unknown-login', login: rule.login } };
    rules.push(rule);
  }
  return { ok: true, rules };
}
