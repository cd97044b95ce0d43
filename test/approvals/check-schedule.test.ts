import { describe, expect, it } from 'vitest';
import { nextCheckAfterFailure, nextCheckAt } from '../../src/approvals/check-schedule.ts';

const options = { maxIntervalMs: 60 * 60_000 };
const created = new Date('2026-11-21T00:00:00Z');
const at = (ms: number) => new Date(created.getTime() + ms);
const MIN = 60_000;

describe('check schedule', () => {
  it('checks an approval younger than 10 minutes at every tick', () => {
    expect(nextCheckAt({ createdAt: created }, at(9 * MIN), options)).toEqual(at(9 * MIN + 1));
  });

  it('backs off to a tenth of the age once older', () => {
    expect(nextCheckAt({ createdAt: created }, at(10 * MIN), options)).toEqual(at(11 * MIN));
    expect(nextCheckAt({ createdAt: created }, at(60 * MIN), options)).toEqual(at(66 * MIN));
  });

  it('never waits longer than the cap', () => {
    expect(nextCheckAt({ createdAt: created }, at(48 * 60 * MIN), options)).toEqual(
      at(49 * 60 * MIN),
    );
  });

  it('retries a failed check after 30 s, doubling, up to the cap', () => {
    const now = at(0);
    expect(nextCheckAfterFailure(1, now, options)).toEqual(at(30_000));
    expect(nextCheckAfterFailure(2, now, options)).toEqual(at(60_000));
    expect(nextCheckAfterFailure(3, now, options)).toEqual(at(120_000));
    expect(nextCheckAfterFailure(20, now, options)).toEqual(at(60 * MIN));
  });
});

describe('check schedule: when a decision is likely', () => {
  const hours = {
    startMinute: 9 * 60,
    endMinute: 18 * 60,
    days: [1, 2, 3, 4, 5],
    defaultTimeZone: 'Europe/Berlin',
  };
  const attentive = {
    ...options,
    attentive: { hours, everyMs: 4 * MIN, whileYoungerThanMs: 7 * 24 * 60 * MIN },
  };
  // Monday 23 November 2026, 08:00 UTC: 09:00 in Berlin.
  const monday = new Date('2026-11-23T08:00:00Z');
  const requested = new Date(monday.getTime() - 2 * 60 * MIN);
  const later = (ms: number) => new Date(monday.getTime() + ms);

  it.each([
    // [what, created, hot until, now, zone, next check after now]
    [
      'inside working hours, 2 h old: every 4 min, not a tenth of the age (12 min)',
      requested,
      null,
      monday,
      undefined,
      4 * MIN,
    ],
    [
      'inside working hours, 10 min old: a tenth of the age is sooner',
      new Date(monday.getTime() - 10 * MIN),
      null,
      monday,
      undefined,
      MIN,
    ],
    ['hot, just marked: every 5 s', requested, later(15 * MIN), monday, undefined, 5_000],
    ['hot, 6 min after the mark: every 20 s', requested, later(9 * MIN), monday, undefined, 20_000],
    [
      'hot mark ended: the working-hours rule again',
      requested,
      later(0),
      monday,
      undefined,
      4 * MIN,
    ],
    [
      'outside working hours (02:00 in Tokyo), 11 h old: a tenth of the age, within the cap',
      requested,
      null,
      later(9 * 60 * MIN),
      'Asia/Tokyo',
      60 * MIN,
    ],
    [
      '8 days old, inside working hours: the age rule alone (the cap)',
      new Date(monday.getTime() - 8 * 24 * 60 * MIN),
      null,
      monday,
      undefined,
      60 * MIN,
    ],
  ])('%s', (_what, createdAt, hotUntil, now, zone, after) => {
    expect(
      nextCheckAt({ createdAt, hotUntil }, now, attentive, zone).getTime() - now.getTime(),
    ).toBe(after);
  });

  it('checks first thing at the next working start when the age rule would wait past it', () => {
    // Sunday 22 November, 23:30 in Berlin; the request is a day old: a tenth of its age is 2.4 h,
    // capped at 1 h; Monday 09:00 Berlin is 9.5 h away, so the cap holds.
    const sunday = new Date('2026-11-22T22:30:00Z');
    const dayOld = new Date(sunday.getTime() - 24 * 60 * MIN);
    expect(nextCheckAt({ createdAt: dayOld }, sunday, attentive).getTime() - sunday.getTime()).toBe(
      60 * MIN,
    );
    // Monday 08:40 Berlin: the working day starts in 20 minutes, before the age rule's hour.
    const early = new Date('2026-11-23T07:40:00Z');
    expect(nextCheckAt({ createdAt: dayOld }, early, attentive)).toEqual(monday);
  });

  it('keeps the old rule exactly without working hours, hot or not yet', () => {
    expect(
      nextCheckAt({ createdAt: requested }, monday, options).getTime() - monday.getTime(),
    ).toBe(12 * MIN);
  });
});
