import type { AnnouncementKind } from '../announcement-rules.ts';
import type { Posted } from '../announcer.ts';
import type { LifecycleEvent } from './events.ts';

/**
 * What a delivered announcement tells about its approval, as events, in the order they are
 * applied: the approver unreachable (Slack said so), the approver's chat account found (looked up
 * for an approver the service handed it to), the request message posted (where it is now).
 * `seq`: the announcement's place in its approval's record.
 */
export function deliveryEvents(
  announcement: { kind: AnnouncementKind; seq: number | null },
  posted: Posted,
): LifecycleEvent[] {
  // Said of the approver it had when the announcement was recorded (handover.ts).
  const seq = Number(announcement.seq ?? Number.MAX_SAFE_INTEGER);
  const events: LifecycleEvent[] = [];
  if (posted.approverUnreachable) events.push({ kind: 'approver-unreachable', seq });
  if (posted.approverChatId)
    events.push({ kind: 'approver-found', seq, chatId: posted.approverChatId });
  if (announcement.kind === 'request' && posted.ts)
    events.push({ kind: 'request-posted', channel: posted.channel, ts: posted.ts });
  return events;
}
