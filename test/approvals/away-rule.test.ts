import { describe, expect, it } from 'vitest';
import { awayOf, type ChatPresence } from '../../src/approvals/away-rule.ts';

const now = new Date('2026-11-23T10:00:00Z');
const later = new Date('2026-12-03T02:00:00Z');
const status = (statusText: string, statusEmoji = '', statusExpiresAt: Date | null = later) =>
  ({ deactivated: false, statusText, statusEmoji, statusExpiresAt }) satisfies ChatPresence;

describe('awayOf', () => {
  it('counts a deactivated account as away, whatever its status', () => {
    expect(awayOf({ ...status(''), deactivated: true, statusExpiresAt: null }, now)).toEqual({
      reason: 'deactivated',
    });
  });

  it.each([
    ['Vacation', ''],
    ['On holiday in Lisbon', ''],
    ['on leave', ''],
    ['Out sick', ''],
    ['OOO until Monday', ''],
    ['Out of office', ''],
    ['', ':palm_tree:'],
    ['', ':face_with_thermometer:'],
    ['休假中', ''],
    ['年假', ''],
    ['请假一周', ''],
    ['病假', ''],
    ['假期', ''],
  ])('counts "%s" %s with a future expiry as away', (text, emoji) => {
    expect(awayOf(status(text, emoji), now)).toEqual({
      reason: 'status',
      until: later,
      text,
      emoji,
    });
  });

  it.each([
    ['In a meeting', ':spiral_calendar_pad:'],
    ['出差', ':airplane:'],
    ['Leaves at 5 today', ''],
    ['Picking up the kids', ''],
    ['Working remotely', ':house_with_garden:'],
  ])('does not count "%s" %s', (text, emoji) => {
    expect(awayOf(status(text, emoji), now)).toBeNull();
  });

  it('does not count a status without expiry, or one that has expired', () => {
    expect(awayOf(status('Vacation', ':palm_tree:', null), now)).toBeNull();
    expect(awayOf(status('Vacation', ':palm_tree:', now), now)).toBeNull();
  });
});
