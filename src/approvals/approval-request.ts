import {
  adaptText,
  serviceLength,
  TEXT_LIMITS,
  type TextChange,
  type TextLimits,
} from './acceptable-text.ts';
import type { StartApprovalInput } from './approval-types.ts';
import { sameLogin } from './person.ts';

/** What the person filled in. */
export interface ApprovalDraft {
  title: string;
  note: string;
  /** The approver's service login, once resolved from whatever the person picked. */
  approverLogin: string | undefined;
}

export type DraftField = 'title' | 'note' | 'approver';

export type DraftProblem =
  | { code: 'required' }
  | { code: 'too-long'; limit: number; length: number }
  | { code: 'self-approval' };

export type PreparedApproval =
  | { ok: true; input: StartApprovalInput; changes: TextChange[] }
  | { ok: false; problems: Partial<Record<DraftField, DraftProblem>> };

/**
 * Checks a draft and adapts its text for the service. Limits are checked on the adapted text,
 * since that is what the service stores (an emoji becomes a longer `:name:`).
 */
export function prepareApproval(
  draft: ApprovalDraft,
  requesterLogin: string,
  limits: TextLimits = TEXT_LIMITS,
): PreparedApproval {
  const problems: Partial<Record<DraftField, DraftProblem>> = {};
  const title = adaptText(draft.title.trim());
  const note = adaptText(draft.note.trim());
  checkText('title', title.text, limits.title, problems);
  checkText('note', note.text, limits.note, problems);
  const approver = draft.approverLogin?.trim() ?? '';
  if (!approver) problems.approver = { code: 'required' };
  else if (sameLogin(approver, requesterLogin)) problems.approver = { code: 'self-approval' };
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return {
    ok: true,
    input: { requester: requesterLogin, approver, title: title.text, note: note.text },
    changes: [...new Set([...title.changes, ...note.changes])],
  };
}

function checkText(
  field: DraftField,
  text: string,
  limit: number,
  problems: Partial<Record<DraftField, DraftProblem>>,
): void {
  const length = serviceLength(text);
  if (length === 0) problems[field] = { code: 'required' };
  else if (length > limit) problems[field] = { code: 'too-long', limit, length };
}
