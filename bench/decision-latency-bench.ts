import {
  ATTENTIVE_DEFAULTS,
  HOT,
  nextCheckAt,
  type ScheduleOptions,
} from '../src/approvals/check-schedule.ts';
import {
  DEFAULT_WORKING_HOURS,
  isWorkingTime,
  nextWorkingStart,
} from '../src/approvals/working-hours.ts';
import { seededRandom } from '../test/helpers/seeded-random.ts';
import { rows, verdict } from './table.ts';

/*
 * How long a decision takes to reach its thread, and what the checks cost the service, with the
 * app's own schedule (check-schedule.ts), simulated over many approvals. The model of approvers
 * (docs/using.md, "How fresh a thread is"):
 * - requests come in the approver's working hours (09:00–18:00 Monday to Friday, their zone);
 * - the decision comes a log-normal time after the request (median 90 minutes, σ 1.2, at most 5
 *   days), moved to the next working morning (within its first two hours) when it would fall
 *   outside working hours: people decide at work;
 * - two thirds of approvers follow a link from Slack first (the DM, the request, Home) and decide
 *   1–3 minutes after the click; the rest go to the service on their own;
 * - the regular pass runs every 30 s, the hot pass every 5 s; a check due at t happens at the
 *   first tick at or after t, and its reply is in the thread at once (delivery is measured apart).
 * GETs are counted per approval-day for an approval nobody decides, over a week and until the app
 * gives up (30 days), as a share of checking every 30 s (2,880 a day).
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const TICK_MS = 30_000;
const HOT_TICK_MS = HOT.firstEveryMs;
const hours = DEFAULT_WORKING_HOURS;
const zone = hours.defaultTimeZone;
const options: ScheduleOptions = {
  maxIntervalMs: HOUR,
  attentive: { hours, ...ATTENTIVE_DEFAULTS },
};

function logNormal(rnd: () => number, median: number, sigma: number): number {
  const u = Math.max(rnd(), 1e-12);
  const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
  return median * Math.exp(sigma * normal);
}

const upTo = (t: number, tick: number) => Math.ceil(t / tick) * tick;

/** A working instant of the week starting Monday 23 November 2026 (UTC, the default zone). */
function requestTime(rnd: () => number): number {
  const monday = Date.parse('2026-11-23T00:00:00Z');
  const day = Math.floor(rnd() * 5);
  return monday + day * DAY + 9 * HOUR + Math.floor(rnd() * 9 * HOUR);
}

function decisionTime(rnd: () => number, requested: number): number {
  const after = Math.min(logNormal(rnd, 90 * MIN, 1.2), 5 * DAY);
  const at = requested + after;
  if (isWorkingTime(new Date(at), zone, hours)) return at;
  const start = nextWorkingStart(new Date(at), zone, hours)?.getTime() ?? at;
  return start + Math.floor(rnd() * 2 * HOUR);
}

/**
 * Checks from `createdAt`, the first at or after `decidedAt` ends it (its time is returned);
 * `clickAt` marks it hot then. `until` stops an undecided approval's checks; `checks` counts them.
 */
function follow(
  createdAt: number,
  decidedAt: number,
  clickAt: number | undefined,
  until = Number.POSITIVE_INFINITY,
): { seenAt: number; checks: number } {
  let next = createdAt;
  let hotUntil: number | undefined;
  let checks = 0;
  for (;;) {
    if (clickAt !== undefined && hotUntil === undefined && next > clickAt) {
      // The click makes it due now (store's markHot); the hot pass takes it at its next tick.
      hotUntil = clickAt + HOT.windowMs;
      next = clickAt;
    }
    const hot = hotUntil !== undefined && next < hotUntil;
    const at = upTo(next, hot ? HOT_TICK_MS : TICK_MS);
    if (at >= until) return { seenAt: Number.NaN, checks };
    checks++;
    if (at >= decidedAt) return { seenAt: at, checks };
    const facts = {
      createdAt: new Date(createdAt),
      hotUntil: hotUntil === undefined ? null : new Date(hotUntil),
    };
    // A check lands on a tick: the next one is at least a tick later, as in the store.
    next = Math.max(nextCheckAt(facts, new Date(at), options, zone).getTime(), at + 1);
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

/** Seconds, one decimal, or minutes past two minutes. */
const shown = (ms: number) =>
  ms >= 2 * MIN ? `${(ms / MIN).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;

export function decisionLatencyBench(
  approvals: number,
  targets: { clickedP95Ms: number; clickedMaxMs: number; quietP95Ms: number },
  budget: { weekShare: number; giveUpShare: number },
): void {
  // Seeded: the same figures every run.
  const rnd = seededRandom(20261127);
  const clicked: number[] = [];
  const quiet: number[] = [];
  for (let i = 0; i < approvals; i++) {
    const created = requestTime(rnd);
    const decided = decisionTime(rnd, created);
    const followsLink = rnd() < 2 / 3;
    const clickAt = followsLink ? Math.max(created, decided - (1 + 2 * rnd()) * MIN) : undefined;
    const { seenAt } = follow(created, decided, clickAt);
    (followsLink ? clicked : quiet).push(seenAt - decided);
  }
  clicked.sort((a, b) => a - b);
  quiet.sort((a, b) => a - b);
  const clickedP95 = percentile(clicked, 0.95);
  const clickedMax = clicked[clicked.length - 1] ?? Number.NaN;
  rows.push({
    case: 'decision → thread, approver followed a link first (simulated schedule)',
    n: clicked.length,
    p50: shown(percentile(clicked, 0.5)),
    p95: shown(clickedP95),
    target: `p95 ${verdict(clickedP95 / 1000, targets.clickedP95Ms / 1000)} s; worst ${shown(clickedMax)} ${verdict(clickedMax / 1000, targets.clickedMaxMs / 1000)} s`,
  });
  const quietP95 = percentile(quiet, 0.95);
  rows.push({
    case: 'decision → thread, in working hours, no signal (simulated schedule)',
    n: quiet.length,
    p50: shown(percentile(quiet, 0.5)),
    p95: shown(quietP95),
    target: `p95 ${verdict(quietP95 / MIN, targets.quietP95Ms / MIN)} min`,
  });
  // An approval nobody decides, requested at each working hour of a week in turn.
  const perDay = TICK_MS > 0 ? DAY / TICK_MS : 0;
  const share = (days: number) => {
    let total = 0;
    let n = 0;
    for (let day = 0; day < 5; day++)
      for (let hour = 9; hour < 18; hour++) {
        const created = Date.parse('2026-11-23T00:00:00Z') + day * DAY + hour * HOUR;
        total += follow(created, Number.POSITIVE_INFINITY, undefined, created + days * DAY).checks;
        n++;
      }
    return total / n / days / perDay;
  };
  const week = share(7);
  const giveUp = share(30);
  rows.push({
    case: 'status GETs per pending approval-day, share of 30-s polling',
    n: 45,
    'first week': `${(week * 100).toFixed(1)} %`,
    'until give-up (30 d)': `${(giveUp * 100).toFixed(1)} %`,
    target: `week ${verdict(week * 100, budget.weekShare * 100)} %; 30 d ${verdict(giveUp * 100, budget.giveUpShare * 100)} %`,
  });
  // One click costs at most this many hot checks per approval marked.
  const hotChecks = HOT.firstMs / HOT.firstEveryMs + (HOT.windowMs - HOT.firstMs) / HOT.thenEveryMs;
  rows.push({
    case: 'hot checks per click, per approval marked (at most 10 per approver, 40 a pass)',
    n: hotChecks,
    target: `≤ ${hotChecks}: ${(hotChecks / perDay).toFixed(3)} of a day of 30-s polling`,
  });
}
