/**
 * Working hours: when an approver may be nagged. Reminders and escalation happen only inside the
 * approver's working hours in their own time zone (the chat says which: Slack's `tz`), on working
 * days; how long someone has waited counts working time, so a Friday-evening request is not
 * "waiting 3 days" on Monday morning. The rule is here, as data and pure functions of an instant;
 * the lifecycle (lifecycle/reminders.ts, heldForWorkingHours) asks it before a reminder or an escalation is recorded.
 */

export interface WorkingHours {
  /** When the working day starts, in minutes after local midnight (09:00 is 540). */
  startMinute: number;
  /** When it ends, in minutes after local midnight, after the start (18:00 is 1080; 1440 is midnight). */
  endMinute: number;
  /** The working weekdays, 0 = Sunday … 6 = Saturday. */
  days: readonly number[];
  /** The zone of someone whose own is unknown (not on the chat, or no zone in their profile). */
  defaultTimeZone: string;
}

export const DEFAULT_WORKING_HOURS: WorkingHours = {
  startMinute: 9 * 60,
  endMinute: 18 * 60,
  days: [1, 2, 3, 4, 5],
  defaultTimeZone: 'UTC',
};

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
// A working period is looked for this many days ahead at most. With one working day a week there
// is one within 8, unless a clock change skips that day's hours (Santiago's clocks went from 00:00
// to 01:00 on Sunday 7 September 2014: hours of 00:00–00:15 on Sundays did not happen that week);
// clock changes are months apart, so the next week's does. More means the hours name no day.
const MAX_DAYS_AHEAD = 15;

/** What a wall clock in `timeZone` shows at an instant. */
interface LocalClock {
  year: number;
  month: number;
  day: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
  /** Minutes after local midnight. */
  minute: number;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `timeZone` is an IANA zone this runtime knows (Slack sends names like "Europe/Berlin"). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The person's own zone when it is known and valid, else the default. */
export function zoneOrDefault(timeZone: string | null | undefined, hours: WorkingHours): string {
  return timeZone && isKnownTimeZone(timeZone) ? timeZone : hours.defaultTimeZone;
}

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * What the wall clock shows, from the zone's offset at that quarter hour: asking Intl for every
 * instant cost a report of 100,000 approvals four fifths of its time. Offsets change on quarter
 * hours (every transition since time zones were standardised falls on one), so one answer per
 * zone and quarter hour holds for every instant in it.
 */
function localClock(at: number, timeZone: string): LocalClock {
  const wall = new Date(Math.floor(at / MINUTE_MS) * MINUTE_MS + quarterOffset(at, timeZone));
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    weekday: wall.getUTCDay(),
    minute: wall.getUTCHours() * 60 + wall.getUTCMinutes(),
  };
}

const QUARTER_MS = 15 * MINUTE_MS;
/** Offsets kept per zone and quarter hour; emptied past this many (a few years of one zone). */
const KEPT_OFFSETS = 200_000;
const offsets = new Map<string, number>();

/** The zone's offset (whole minutes) during the quarter hour `at` is in. */
function quarterOffset(at: number, timeZone: string): number {
  const quarter = Math.floor(at / QUARTER_MS) * QUARTER_MS;
  const key = `${timeZone} ${quarter}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    const c = formattedClock(quarter, timeZone);
    offset = Date.UTC(c.year, c.month - 1, c.day, 0, c.minute) - quarter;
    if (offsets.size >= KEPT_OFFSETS) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/** What Intl says a wall clock in `timeZone` shows at an instant. */
function formattedClock(at: number, timeZone: string): LocalClock {
  const parts: Record<string, string> = {};
  for (const p of formatterOf(timeZone).formatToParts(new Date(at))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS[parts.weekday ?? ''] ?? 0,
    minute: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** The zone's offset from UTC at an instant, in ms (whole minutes: seconds are dropped). */
function offsetAt(at: number, timeZone: string): number {
  const c = localClock(at, timeZone);
  const wall = Date.UTC(c.year, c.month - 1, c.day, 0, c.minute);
  return wall - Math.floor(at / MINUTE_MS) * MINUTE_MS;
}

/**
 * The instant a wall clock in `timeZone` shows `minute` on the given local date; in a gap (a
 * clock moved forward) the instant the clock jumped past it.
 */
function instantOf(
  date: { year: number; month: number; day: number },
  minute: number,
  timeZone: string,
): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day, 0, minute);
  const first = wall - offsetAt(wall, timeZone);
  const second = wall - offsetAt(first, timeZone);
  if (second === first || offsetAt(second, timeZone) === wall - second) return second;
  // A gap: neither guess shows `minute`. The later offset applies from the jump on; the earlier
  // guess minus the later offset is past the jump, the first instant of the day's working time.
  return Math.max(first, second);
}

function isWorkingClock(c: LocalClock, hours: WorkingHours): boolean {
  return (
    hours.days.includes(c.weekday) && c.minute >= hours.startMinute && c.minute < hours.endMinute
  );
}

/** Whether two instants fall on the same local date in `timeZone`. */
export function sameLocalDay(a: Date, b: Date, timeZone: string): boolean {
  const x = localClock(a.getTime(), timeZone);
  const y = localClock(b.getTime(), timeZone);
  return x.year === y.year && x.month === y.month && x.day === y.day;
}

/** Whether `at` is inside working hours on a working day, in `timeZone`. */
export function isWorkingTime(at: Date, timeZone: string, hours: WorkingHours): boolean {
  return isWorkingClock(localClock(at.getTime(), timeZone), hours);
}

/**
 * The first instant at or after `at` that is working time in `timeZone`: `at` itself inside
 * working hours, else the start of the next working day's hours. Undefined when the hours name
 * no working day.
 */
export function nextWorkingStart(
  at: Date,
  timeZone: string,
  hours: WorkingHours,
): Date | undefined {
  const t = at.getTime();
  if (isWorkingTime(at, timeZone, hours)) return at;
  for (let d = 0; d <= MAX_DAYS_AHEAD; d++) {
    const c = localClock(t + d * DAY_MS, timeZone);
    if (!hours.days.includes(c.weekday)) continue;
    const start = instantOf(c, hours.startMinute, timeZone);
    if (start >= t && isWorkingTime(new Date(start), timeZone, hours)) return new Date(start);
  }
  return undefined;
}

/** The end of the working period `at` is in (the first instant after it that is not working). */
function workingPeriodEnd(at: number, timeZone: string, hours: WorkingHours): number {
  const c = localClock(at, timeZone);
  if (hours.endMinute >= 24 * 60) {
    // Until midnight: the start of the next local day.
    const next = localClock(at + DAY_MS, timeZone);
    return Math.max(at + 1, instantOf(next, 0, timeZone));
  }
  return Math.max(at + 1, instantOf(c, hours.endMinute, timeZone));
}

/** How much working time, in ms, lies between two instants in `timeZone`. */
export function workingMsBetween(
  from: Date,
  to: Date,
  timeZone: string,
  hours: WorkingHours,
): number {
  let total = 0;
  let t = from.getTime();
  const end = to.getTime();
  // One working period per turn; a wait of a year is at most ~370 turns.
  for (let turn = 0; turn < 400 && t < end; turn++) {
    const start = nextWorkingStart(new Date(t), timeZone, hours)?.getTime();
    if (start === undefined || start >= end) break;
    const periodEnd = workingPeriodEnd(start, timeZone, hours);
    total += Math.min(periodEnd, end) - start;
    t = periodEnd;
  }
  return total;
}

/**
 * How long someone has waited, for saying so ("waiting 2 days"): the working time between the
 * two instants, where each full working day counts as a day (returned as that many 24-hour days),
 * and less than one working day as the hours and minutes it was.
 */
export function workingWait(from: Date, to: Date, timeZone: string, hours: WorkingHours): number {
  const worked = workingMsBetween(from, to, timeZone, hours);
  const dayMs = (hours.endMinute - hours.startMinute) * MINUTE_MS;
  return worked >= dayMs ? Math.floor(worked / dayMs) * DAY_MS : worked;
}

/** `HH:MM-HH:MM` (24-hour, end after start; `24:00` is midnight) as start and end minutes. */
export function parseWorkingHours(
  text: string,
): { startMinute: number; endMinute: number } | undefined {
  const m = /^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$/.exec(text);
  if (!m) return undefined;
  const [start, end] = [Number(m[1]) * 60 + Number(m[2]), Number(m[3]) * 60 + Number(m[4])];
  if (Number(m[2]) > 59 || Number(m[4]) > 59 || start >= end || end > 24 * 60) return undefined;
  return { startMinute: start, endMinute: end };
}

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FULL_DAY_NAMES = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
];

/** A day's weekday number from its three-letter or full English name (any case); -1 otherwise. */
function dayNumber(name: string): number {
  const lower = name.trim().toLowerCase();
  const short = DAY_NAMES.indexOf(lower);
  return short >= 0 ? short : FULL_DAY_NAMES.indexOf(lower);
}

/** The days of `from-to`, wrapping past Saturday (`fri-mon` is Friday to Monday). */
function daysFrom(from: number, to: number): number[] {
  const days = [from];
  for (let d = from; d !== to; ) {
    d = (d + 1) % 7;
    days.push(d);
  }
  return days;
}

/**
 * Working days from a comma-separated list of days and ranges of two days (`mon-fri`, `sun-thu`,
 * `mon,wed,fri`, `fri-mon`), each day its three-letter or full English name in any case, as
 * weekday numbers; undefined for anything else. Only what docs/configuration.md documents is read:
 * spaces between days (`mon tue`), an en dash (`mon–fri`), a three-day range (`mon-fri-sun`) or an
 * abbreviation (`tues`) is refused rather than read as something else (once, "mon tue wed" was
 * Monday only).
 */
export function parseWorkingDays(text: string): number[] | undefined {
  const days = new Set<number>();
  for (const part of text.split(',')) {
    const ends = part.split('-').map(dayNumber);
    const [from, to] = ends;
    if (from === undefined || ends.length > 2 || ends.some((d) => d < 0)) return undefined;
    for (const day of to === undefined ? [from] : daysFrom(from, to)) days.add(day);
  }
  return days.size > 0 ? [...days].sort((a, b) => a - b) : undefined;
}

/**
 * The start of a calendar day (`YYYY-MM-DD`) in `timeZone`: the day someone picked in a date
 * picker, as an instant. Undefined for a malformed date; an unknown zone counts as UTC.
 */
export function startOfLocalDate(isoDate: string, timeZone: string | undefined): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const utc = new Date(Date.UTC(year, month - 1, day));
  if (utc.getUTCMonth() !== month - 1 || utc.getUTCDate() !== day) return undefined;
  const zone = timeZone && isKnownTimeZone(timeZone) ? timeZone : 'UTC';
  return new Date(instantOf({ year, month, day }, 0, zone));
}

/** The calendar day (`YYYY-MM-DD`) an instant falls on in `timeZone` (unknown zones: UTC). */
export function localDateOf(at: Date, timeZone: string | undefined): string {
  const zone = timeZone && isKnownTimeZone(timeZone) ? timeZone : 'UTC';
  const c = localClock(at.getTime(), zone);
  return `${c.year}-${String(c.month).padStart(2, '0')}-${String(c.day).padStart(2, '0')}`;
}
