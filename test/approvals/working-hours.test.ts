import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKING_HOURS,
  isWorkingTime,
  nextWorkingStart,
  parseWorkingDays,
  parseWorkingHours,
  type WorkingHours,
  workingMsBetween,
  workingWait,
  zoneOrDefault,
} from '../../src/approvals/working-hours.ts';
import { runs } from '../helpers/fast-check-runs.ts';

// The working-hours rule over generated time zones, instants and hours. Zones with a fixed offset
// since 2000 have an independent oracle (the instant shifted by the offset, read as UTC); zones
// with daylight saving time, half- and quarter-hour offsets and the date line are checked for the
// rule's own promises (the next start is working time with nothing working before it, working time
// adds up).

const FIXED: Record<string, number> = {
  UTC: 0,
  'Asia/Kolkata': 330,
  'Asia/Kathmandu': 345,
  'Asia/Tokyo': 540,
  'America/Phoenix': -420,
  'Pacific/Kiritimati': 840,
  'Pacific/Pago_Pago': -660,
};
const SHIFTING = [
  'Europe/Berlin',
  'America/Los_Angeles',
  'America/St_Johns',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Santiago',
  'Asia/Tehran',
  'Africa/Casablanca',
  'Asia/Shanghai',
];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const instants = fc
  .date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2039-12-31T00:00:00Z') })
  .filter((d) => !Number.isNaN(d.getTime()));
const hoursArb: fc.Arbitrary<WorkingHours> = fc
  .record({
    start: fc.integer({ min: 0, max: 23 * 4 }).map((q) => q * 15),
    length: fc.integer({ min: 1, max: 24 * 4 }).map((q) => q * 15),
    days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }),
  })
  .map(({ start, length, days }) => ({
    startMinute: start,
    endMinute: Math.min(24 * 60, start + length),
    days,
    defaultTimeZone: 'UTC',
  }));

/** The oracle for a fixed-offset zone: the local clock is the instant shifted, read as UTC. */
function workingByOffset(at: Date, offsetMinutes: number, hours: WorkingHours): boolean {
  const local = new Date(at.getTime() + offsetMinutes * MINUTE);
  const minute = local.getUTCHours() * 60 + local.getUTCMinutes();
  return (
    hours.days.includes(local.getUTCDay()) &&
    minute >= hours.startMinute &&
    minute < hours.endMinute
  );
}

describe('working hours', () => {
  it('agrees with the clock of a fixed-offset zone, weekends and all', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(FIXED)), instants, hoursArb, (zone, at, hours) => {
        expect(isWorkingTime(at, zone, hours)).toBe(workingByOffset(at, FIXED[zone] ?? 0, hours));
      }),
      { numRuns: runs(500) },
    );
  });

  it('finds the next week’s hours when a clock change skipped this week’s (found by the property below)', () => {
    // Santiago, Sunday 7 September 2014: clocks went from 00:00 to 01:00, so Sunday hours of
    // 00:00–00:15 did not happen that week; the next were on the 14th.
    const hours = { startMinute: 0, endMinute: 15, days: [0], defaultTimeZone: 'UTC' };
    const next = nextWorkingStart(new Date('2014-08-31T04:15:00Z'), 'America/Santiago', hours);
    expect(next?.toISOString()).toBe('2014-09-14T03:00:00.000Z');
  });

  it('finds the next working start: working time itself, nothing working before it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(FIXED), ...SHIFTING),
        instants,
        hoursArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (zone, at, hours, fraction) => {
          const next = nextWorkingStart(at, zone, hours);
          if (!next) throw new Error(`no working start for ${JSON.stringify(hours)}`);
          expect(next.getTime()).toBeGreaterThanOrEqual(at.getTime());
          // A week and a day, or two when a clock change skipped that week's hours (below).
          expect(next.getTime() - at.getTime()).toBeLessThanOrEqual(15 * 24 * HOUR);
          expect(isWorkingTime(next, zone, hours)).toBe(true);
          if (next > at) {
            // Any instant before it (by the minute) is outside working hours.
            const span = next.getTime() - at.getTime();
            const before = new Date(at.getTime() + Math.floor((span * fraction) / MINUTE) * MINUTE);
            if (before < next) expect(isWorkingTime(before, zone, hours)).toBe(false);
            const lastMinute = new Date(next.getTime() - MINUTE);
            if (lastMinute >= at) expect(isWorkingTime(lastMinute, zone, hours)).toBe(false);
          }
        },
      ),
      { numRuns: runs(500) },
    );
  });

  it('adds working time up, never more than the time that passed', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(FIXED), ...SHIFTING),
        instants,
        fc.integer({ min: 0, max: 20 * 24 * 60 }),
        fc.integer({ min: 0, max: 20 * 24 * 60 }),
        hoursArb,
        (zone, a, m1, m2, hours) => {
          const b = new Date(a.getTime() + m1 * MINUTE);
          const c = new Date(b.getTime() + m2 * MINUTE);
          const ab = workingMsBetween(a, b, zone, hours);
          const bc = workingMsBetween(b, c, zone, hours);
          expect(ab).toBeGreaterThanOrEqual(0);
          expect(ab).toBeLessThanOrEqual(b.getTime() - a.getTime());
          expect(workingMsBetween(a, c, zone, hours)).toBe(ab + bc);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('counts a fixed-offset zone’s working week exactly', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(FIXED)), instants, hoursArb, (zone, a, hours) => {
        const week = workingMsBetween(a, new Date(a.getTime() + 7 * 24 * HOUR), zone, hours);
        expect(week).toBe(hours.days.length * (hours.endMinute - hours.startMinute) * MINUTE);
      }),
      { numRuns: runs(300) },
    );
  });

  it('says a Friday-evening request waited one day on Tuesday morning, not four', () => {
    const friday = new Date('2026-11-20T17:30:00+01:00'); // Berlin, 17:30 on a Friday
    const tuesday = new Date('2026-11-24T10:00:00+01:00');
    const zone = 'Europe/Berlin';
    // 30 min on Friday, 9 h on Monday, 1 h on Tuesday: one working day and a bit.
    expect(workingMsBetween(friday, tuesday, zone, DEFAULT_WORKING_HOURS)).toBe(10.5 * HOUR);
    expect(workingWait(friday, tuesday, zone, DEFAULT_WORKING_HOURS)).toBe(24 * HOUR);
    // Saturday is not working time, and the next start is Monday 09:00 there.
    expect(isWorkingTime(new Date('2026-11-21T11:00:00+01:00'), zone, DEFAULT_WORKING_HOURS)).toBe(
      false,
    );
    expect(
      nextWorkingStart(new Date('2026-11-20T18:00:00+01:00'), zone, DEFAULT_WORKING_HOURS),
    ).toEqual(new Date('2026-11-23T09:00:00+01:00'));
  });

  it('reads the settings, and falls back to the default zone for an unknown one', () => {
    expect(parseWorkingHours('09:00-18:00')).toEqual({ startMinute: 540, endMinute: 1080 });
    expect(parseWorkingHours('8:30 - 24:00')).toEqual({ startMinute: 510, endMinute: 1440 });
    expect(parseWorkingHours('18:00-09:00')).toBeUndefined();
    expect(parseWorkingHours('9-17')).toBeUndefined();
    expect(parseWorkingDays('mon-fri')).toEqual([1, 2, 3, 4, 5]);
    expect(parseWorkingDays('sun-thu')).toEqual([0, 1, 2, 3, 4]);
    expect(parseWorkingDays('fri-mon')).toEqual([0, 1, 5, 6]);
    expect(parseWorkingDays('mon,wed, Friday')).toEqual([1, 3, 5]);
    expect(parseWorkingDays('someday')).toBeUndefined();
    expect(zoneOrDefault('Mars/Olympus', DEFAULT_WORKING_HOURS)).toBe('UTC');
    expect(zoneOrDefault(undefined, DEFAULT_WORKING_HOURS)).toBe('UTC');
    expect(zoneOrDefault('America/Los_Angeles', DEFAULT_WORKING_HOURS)).toBe('America/Los_Angeles');
  });
});
