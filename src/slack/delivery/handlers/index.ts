import type { AnnouncementKind } from '../../../approvals/announcement-rules.ts';
import { deliverApproverDm } from './approver-dm.ts';
import { deliverApproverUnreachable } from './approver-unreachable.ts';
import { deliverEnded, deliverGaveUp, deliverVanished } from './closing-replies.ts';
import { deliverDecision } from './decision.ts';
import { deliverEscalation } from './escalation.ts';
import { deliverEscalationNote } from './escalation-note.ts';
import { deliverHandedOver } from './handed-over.ts';
import type { Handler } from './handler.ts';
import { deliverParentUpdate } from './parent-update.ts';
import { deliverReminderNote } from './reminder-note.ts';
import { deliverRequest } from './request.ts';
import { deliverStepComplete } from './step-complete.ts';
import { deliverStepFailed, deliverStepSkipped, deliverStepUncertain } from './step-notes.ts';

export type { Handler } from './handler.ts';

/**
 * Every kind of announcement and the handler that delivers it. A Record over the kinds: a kind
 * added to announcement-rules.ts without a handler here does not compile.
 */
export const HANDLERS: Readonly<Record<AnnouncementKind, Handler>> = {
  request: deliverRequest,
  'approver-dm': deliverApproverDm,
  reminder: deliverApproverDm,
  'approver-dm-update': deliverApproverDm,
  'reminder-note': deliverReminderNote,
  decision: deliverDecision,
  'gave-up': deliverGaveUp,
  ended: deliverEnded,
  vanished: deliverVanished,
  'approver-unreachable': deliverApproverUnreachable,
  escalation: deliverEscalation,
  'escalation-note': deliverEscalationNote,
  'handed-over': deliverHandedOver,
  'parent-update': deliverParentUpdate,
  'step-complete': deliverStepComplete,
  'step-skipped': deliverStepSkipped,
  'step-uncertain': deliverStepUncertain,
  'step-failed': deliverStepFailed,
};
