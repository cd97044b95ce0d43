import { adaptText, serviceLength } from './acceptable-text.ts';
import type { StepRule } from './steps.ts';

/**
 * Request templates of a channel: a name, a title prefix, a note skeleton and a default approver,
 * which the request form offers in that channel. Managed by the channel's members (WHO_MAY in
 * access-policy.ts); every change is recorded with who made it and when.
 */

/**
 * How many and how big. The title prefix leaves half of the service's 200 characters to the
 * title itself; the skeleton is a start, not a whole note (the service takes far more).
 */
export const TEMPLATE_LIMITS = {
  perChannel: 20,
  name: 50,
  titlePrefix: 100,
  noteSkeleton: 2000,
} as const;

export interface RequestTemplate {
  id: string;
  /** The conversation whose template it is. */
  channelId: string;
  name: string;
  titlePrefix: string;
  noteSkeleton: string;
  /** The chat account proposed as approver, or null to keep the form's suggestion. */
  approverChatId: string | null;
  /** The steps after the form's approver (steps.ts), in order; none: one step. */
  laterSteps?: StepRule[];
  createdBy: string;
  createdAt: Date;
  updatedBy: string;
  updatedAt: Date;
  /** Set once removed: a removed template is offered nowhere, but requests made from it still name it. */
  removedBy: string | null;
  removedAt: Date | null;
}

/** What a person typed into the template editor. */
export interface TemplateDraft {
  name: string;
  titlePrefix: string;
  noteSkeleton: string;
  approverChatId: string | null;
  /** The steps after the form's approver; absent or empty: one step. */
  laterSteps?: StepRule[];
}

export type TemplateField = 'name' | 'titlePrefix' | 'noteSkeleton';

export type TemplateProblem =
  | { code: 'required' }
  /** `asSent`: within the limit as typed, past it as the service stores it (emoji as `:name:`). */
  | { code: 'too-long'; limit: number; length: number; asSent?: boolean }
  | { code: 'name-taken' }
  | { code: 'too-many'; limit: number }
  | { code: 'gone' };

/** One recorded change, newest first in the history. */
export interface TemplateChange {
  templateId: string;
  /** The template's name after the change (before it, for a removal). */
  name: string;
  action: 'added' | 'edited' | 'removed';
  by: string;
  at: Date;
}

/** Why a store refused a write that passed the checks: the channel's state decided it. */
export type TemplateWrite =
  | { ok: true; template: RequestTemplate }
  | { ok: false; field: TemplateField; problem: TemplateProblem };

/** Persistence of templates, implemented with Kysely in src/store. */
export interface TemplateStore {
  /** The channel's templates, not removed, by name. */
  list(channelId: string): Promise<RequestTemplate[]>;
  /** A template by id, removed or not. */
  get(id: string): Promise<RequestTemplate | undefined>;
  /**
   * Adds a template, with its change, in one transaction; refused (nothing written) when the
   * channel already has a template of that name (case-insensitive) or TEMPLATE_LIMITS.perChannel.
   */
  add(channelId: string, draft: TemplateDraft, by: string, now: Date): Promise<TemplateWrite>;
  /** Replaces a template's fields, with its change; refused when the name is taken or it is gone. */
  update(id: string, draft: TemplateDraft, by: string, now: Date): Promise<TemplateWrite>;
  /** Removes a template (kept as removed), with its change; false when it was gone already. */
  remove(id: string, by: string, now: Date): Promise<boolean>;
  /** The channel's latest changes, newest first. */
  history(channelId: string, limit: number): Promise<TemplateChange[]>;
}

export type CheckedDraft =
  | { ok: true; draft: TemplateDraft }
  | { ok: false; problems: Partial<Record<TemplateField, TemplateProblem>> };

/**
 * Checks what was typed: a name is required; each text within its limit, counted as the service
 * counts (code points) both as typed (what the editor's inputs hold) and, for the prefix and the
 * skeleton, as they will be sent (adapted: an emoji becomes its longer `:name:`), since a request
 * made from the template carries them so. Text is trimmed and kept as typed otherwise: it is
 * escaped wherever it is shown, and adapted for the service only when a request is made.
 */
export function checkTemplateDraft(draft: TemplateDraft): CheckedDraft {
  const trimmed: TemplateDraft = {
    name: draft.name.trim().replace(/\s+/g, ' '),
    titlePrefix: draft.titlePrefix.trim(),
    noteSkeleton: draft.noteSkeleton.trim(),
    approverChatId: draft.approverChatId,
    ...(draft.laterSteps?.length ? { laterSteps: draft.laterSteps } : {}),
  };
  const problems: Partial<Record<TemplateField, TemplateProblem>> = {};
  if (trimmed.name === '') problems.name = { code: 'required' };
  const length = serviceLength(trimmed.name);
  if (length > TEMPLATE_LIMITS.name)
    problems.name = { code: 'too-long', limit: TEMPLATE_LIMITS.name, length };
  Object.assign(problems, templateOverLimits(trimmed));
  return Object.keys(problems).length > 0 ? { ok: false, problems } : { ok: true, draft: trimmed };
}

/**
 * The parts of a template a request carries to the service, past their limits as typed or as
 * sent. Empty for a template saved by this release's checks; one saved by an earlier release,
 * which counted only as typed, may be past them, and a request made from it is then told that
 * the template is what to change.
 */
export function templateOverLimits(
  template: Pick<TemplateDraft, 'titlePrefix' | 'noteSkeleton'>,
): Partial<Record<'titlePrefix' | 'noteSkeleton', TemplateProblem>> {
  const problems: Partial<Record<'titlePrefix' | 'noteSkeleton', TemplateProblem>> = {};
  for (const field of ['titlePrefix', 'noteSkeleton'] as const) {
    const limit = TEMPLATE_LIMITS[field];
    const typed = serviceLength(template[field]);
    const sent = serviceLength(adaptText(template[field]).text);
    if (typed > limit) problems[field] = { code: 'too-long', limit, length: typed };
    else if (sent > limit)
      problems[field] = { code: 'too-long', limit, length: sent, asSent: true };
  }
  return problems;
}

/**
 * Names compare as they look: without case or surrounding space ("Purchase" and "purchase " are
 * one name), in Unicode's compatibility form (an accent typed apart, a full-width letter) and
 * without invisible format characters (zero-width spaces and joiners, soft hyphens), so two names
 * that read the same cannot both be offered.
 */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** What the form holds when a template is picked. */
export interface FormText {
  title: string;
  note: string;
}

/**
 * The form's title and note once `template` is picked, keeping what the person wrote:
 * - the title gets the template's prefix in front, unless it already starts with it; the prefix
 *   of the template picked before (`previous`) is taken off first, so switching templates never
 *   stacks prefixes;
 * - the note becomes the skeleton only when it is empty or still the previous template's
 *   skeleton untouched; a note the person wrote is kept (`noteKept`), never wiped.
 */
export function applyTemplate(
  typed: FormText,
  template: Pick<RequestTemplate, 'titlePrefix' | 'noteSkeleton'>,
  previous?: Pick<RequestTemplate, 'titlePrefix' | 'noteSkeleton'>,
): FormText & { noteKept: boolean } {
  let rest = typed.title.trim();
  if (previous?.titlePrefix && rest.startsWith(previous.titlePrefix))
    rest = rest.slice(previous.titlePrefix.length).trimStart();
  const prefix = template.titlePrefix;
  const title = !prefix || rest.startsWith(prefix) ? rest : rest ? `${prefix} ${rest}` : prefix;
  const note = typed.note.trim();
  const untouched = note === '' || (previous !== undefined && note === previous.noteSkeleton);
  if (untouched) return { title, note: template.noteSkeleton, noteKept: false };
  return { title, note: typed.note, noteKept: template.noteSkeleton !== '' };
}
