import { sameLogin } from './person.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * One reminder a day per approver: an approver with several approvals waiting gets one digest at
 * the start of their working day (every approval waiting for them, who asked, how long it has
 * waited, its link) instead of one reminder each. Each approval's reminder is still recorded on its
 * own (its count, its escalation); what this rule decides is how its DM reaches the approver.
 */

/** A reminder DM already posted to the approver. */
export interface EarlierReminder {
  channel: string;
  ts: string;
  /** When it was posted (its attempt's start, on the app's clock). */
  at: Date;
  /** When the DM of this kind before it was posted to them, if one was. */
  previousAt?: Date;
}

export type ReminderDelivery =
  /** The only approval waiting for them: the usual reminder DM. */
  | { as: 'single' }
  /** Several wait: one DM listing them all. */
  | { as: 'digest' }
  /** Today's digest (or reminder) already told them of this one: that post is its delivery. */
  | { as: 'covered'; by: { channel: string; ts: string } };

/**
 * How a reminder recorded at `recordedAt` reaches its approver, when `waiting` approvals (its own
 * included) wait for them and `earlier` is the last reminder DM posted to them:
 * - that DM was the first of its day (`sameDay`, in their time zone) and went out once this
 *   reminder was recorded (even on the next day, its delivery held past midnight): covered, since the day's first DM posted while two or more were waiting is a
 *   digest of all of them (the reminders one pass records at the start of the approver's day are
 *   all covered by the first one's digest);
 * - it went out today before this reminder was recorded, or was a later one of the day (which is
 *   about its own approval only): this one alone (one digest a day, not one more each time a later
 *   request, or a next reminder, falls due);
 * - else a digest when two or more wait, the usual reminder when only this one does.
 */
export function reminderDelivery(input: {
  recordedAt: Date;
  waiting: number;
  earlier: EarlierReminder | undefined;
  sameDay: (a: Date, b: Date) => boolean;
}): ReminderDelivery {
  const { earlier } = input;
  if (earlier && earlier.at >= input.recordedAt) {
    // Posted once this was recorded, whatever day it was recorded on (delivery held past
    // midnight): the day's first lists it; a later one of that day is about its own approval.
    const daysFirst = !earlier.previousAt || !input.sameDay(earlier.previousAt, earlier.at);
    return daysFirst
      ? { as: 'covered', by: { channel: earlier.channel, ts: earlier.ts } }
      : { as: 'single' };
  }
  if (earlier && input.sameDay(earlier.at, input.recordedAt)) return { as: 'single' };
  return input.waiting >= 2 ? { as: 'digest' } : { as: 'single' };
}

/** At most this many approvals are listed in a digest; the rest are counted ("and 3 more"). */
export const DIGEST_LISTED = 10;

/** How many of the approvals waiting for someone a digest reads, to list its DIGEST_LISTED. */
export const DIGEST_SCAN = 100;

/**
 * What a digest to the person with `login` lists of the approvals the store finds for them (those
 * they approve, and those escalated to them), in order: only those waiting for them to decide.
 * One only escalated to them waits for its approver, whom only they can be reminded of; the
 * escalation DM told them of it, and "waiting for you" would be untrue. Each listed approval must
 * also pass the audience check on its own (audience.ts): that is the caller's, who knows the chat.
 */
export function digestEntries(
  waiting: readonly TrackedApproval[],
  login: string,
): TrackedApproval[] {
  return waiting.filter((a) => sameLogin(a.parties.approver.login, login));
}
