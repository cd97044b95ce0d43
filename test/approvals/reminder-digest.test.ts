import { describe, expect, it } from 'vitest';
import { digestEntries, reminderDelivery } from '../../src/approvals/reminder-digest.ts';
import { trackedApproval } from '../helpers/approval-builder.ts';

const at = (iso: string) => new Date(iso);
// Days in UTC for these cases; the announcer passes the approver's own zone.
const sameDay = (a: Date, b: Date) => a.toISOString().slice(0, 10) === b.toISOString().slice(0, 10);
const post = (iso: string) => ({ channel: 'D1', ts: '1.000', at: at(iso) });

describe('the reminder of the day', () => {
  it('is a digest when several wait, the usual reminder when one does', () => {
    const recordedAt = at('2026-11-23T09:05:00Z');
    expect(reminderDelivery({ recordedAt, waiting: 3, earlier: undefined, sameDay })).toEqual({
      as: 'digest',
    });
    expect(reminderDelivery({ recordedAt, waiting: 1, earlier: undefined, sameDay })).toEqual({
      as: 'single',
    });
    // Yesterday's DM changes nothing today.
    expect(
      reminderDelivery({ recordedAt, waiting: 2, earlier: post('2026-11-22T09:05:00Z'), sameDay }),
    ).toEqual({ as: 'digest' });
  });

  it('is covered by the digest posted once it was recorded, and alone when it falls due later that day', () => {
    const digest = post('2026-11-23T09:05:00Z');
    expect(
      reminderDelivery({
        recordedAt: at('2026-11-23T09:05:00Z'),
        waiting: 3,
        earlier: digest,
        sameDay,
      }),
    ).toEqual({ as: 'covered', by: { channel: 'D1', ts: '1.000' } });
    expect(
      reminderDelivery({
        recordedAt: at('2026-11-23T11:05:00Z'),
        waiting: 4,
        earlier: digest,
        sameDay,
      }),
    ).toEqual({ as: 'single' });
  });

  it('is not covered by a later DM of the day, which was about its own approval only', () => {
    // The day's digest at 09:05; at 11:05 one pass records two: the first goes alone at 11:05:01.
    const second = {
      ...post('2026-11-23T11:05:01Z'),
      previousAt: at('2026-11-23T09:05:00Z'),
    };
    expect(
      reminderDelivery({
        recordedAt: at('2026-11-23T11:05:00Z'),
        waiting: 4,
        earlier: second,
        sameDay,
      }),
    ).toEqual({ as: 'single' });
    // The DM before it was yesterday's: it is today's first, the digest of all waiting.
    expect(
      reminderDelivery({
        recordedAt: at('2026-11-23T09:05:00Z'),
        waiting: 4,
        earlier: { ...post('2026-11-23T09:05:01Z'), previousAt: at('2026-11-22T09:05:00Z') },
        sameDay,
      }),
    ).toEqual({ as: 'covered', by: { channel: 'D1', ts: '1.000' } });
  });

  it('is covered by the next day’s first DM when its delivery was held past midnight', () => {
    // Two recorded at 23:50, Slack away until 00:10: the first posts the digest of both.
    const digest = { ...post('2026-11-24T00:10:00Z'), previousAt: at('2026-11-23T09:05:00Z') };
    expect(
      reminderDelivery({
        recordedAt: at('2026-11-23T23:50:00Z'),
        waiting: 2,
        earlier: digest,
        sameDay,
      }),
    ).toEqual({ as: 'covered', by: { channel: 'D1', ts: '1.000' } });
  });
});

describe('what a digest lists', () => {
  const waiting = (djbh: string, approverLogin: string, escalatedTo: string | null) =>
    trackedApproval(djbh, {
      parties: { approver: { login: approverLogin } },
      followUp: { escalatedTo: escalatedTo ? { login: escalatedTo, chatId: 'U0ANY' } : null },
    });
  const MARIA = 'maria.lopez@corp.example';

  it.each([
    ['theirs to decide', waiting('A', MARIA, null), true],
    ['theirs, spelled otherwise', waiting('B', 'Maria.Lopez@Corp.example', null), true],
    ['theirs, also escalated above them', waiting('C', MARIA, 'chen.hao@corp.example'), true],
    ['only escalated to them', waiting('D', 'li.wei@corp.example', MARIA), false],
    ['someone else’s', waiting('E', 'li.wei@corp.example', null), false],
  ])('lists an approval %s: %s', (_, approval, listed) => {
    expect(digestEntries([approval], MARIA)).toEqual(listed ? [approval] : []);
  });
});
