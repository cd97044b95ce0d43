import { type AnnouncementRule, ruleOf } from './announcement-rules.ts';
import { AnnounceError, type Announcer, type AttemptClock, type Posted } from './announcer.ts';
import {
  afterSearchMissed,
  classifyFailure,
  type FailurePolicy,
  type FailureVerdict,
} from './delivery-failure.ts';
import type { createLanePacer } from './lane-pacer.ts';
import { stillWorthReminding } from './lifecycle/reminders.ts';
import type { AnnouncementClaim, Deliverable, Outbox } from './outbox.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/*
 * One delivery attempt, as a pipeline of named steps: claim the announcement (and its lane's
 * turn), check it is still worth delivering, recover a post an earlier attempt may have made, post,
 * record. Whatever throws on the way is classified by delivery-failure.ts, and its verdict
 * recorded. The dispatcher (announcement-dispatcher.ts) decides which attempts run when.
 */

export type AttemptOutcome =
  | 'sent'
  | 'recovered'
  | 'retry'
  | 'failed'
  | 'skipped'
  | 'lost'
  /** Slack refused the app's token: the attempt is put back and delivery paused fleet-wide. */
  | 'paused';

type Logger = {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export interface AttemptDeps {
  store: Outbox;
  announcer: Announcer;
  logger: Logger;
  /** Whether the service still has the approval undecided (DispatcherDeps.stillPending). */
  stillPending?: (approval: TrackedApproval) => Promise<boolean>;
  onOutcome?: (outcome: AttemptOutcome, kind: string, ms: number) => void;
  random: () => number;
  monotonic: () => number;
  pacer: ReturnType<typeof createLanePacer>;
  /** True once the dispatcher is stopping: an attempt still waiting for its turn gives it back. */
  stopping: () => boolean;
  /** Pauses delivery fleet-wide: Slack refused the app's token. */
  pauseEverything: (reason: string, now: Date) => Promise<void>;
  /** The backoff before attempt `attempts + 1` (announcement-dispatcher.ts's retryDelayMs). */
  retryDelayMs: (attempts: number, random: () => number) => number;
}

export interface AttemptSettings {
  leaseMs: number;
  callTimeoutMs: number;
  laneIntervalMs: number;
  lookaheadMs: number;
  /** The dispatcher's own wait for a lane it posted to ends this much after the database's. */
  paceMarginMs: number;
  failures: FailurePolicy;
}

/** An attempt under way: what it claimed, and what it has learnt so far. */
interface Attempt {
  d: Deliverable;
  rule: AnnouncementRule;
  claim: AnnouncementClaim;
  now: Date;
  clock: AttemptClock;
  /**
   * Whether an earlier attempt may have posted this. It stays so until a search has completed and
   * found nothing: a search that failed or ran out of time proves nothing. Edits and completions
   * are simply done again.
   */
  mayBePosted: boolean;
  /** Whether this attempt has sent its own post (which Slack may then commit late). */
  posting: boolean;
}

/** What every step is given: the dispatcher's parts and settings. */
type Env = AttemptDeps & { settings: AttemptSettings };

/** Delivers one head of a lane at `now`; rejects only when the store fails to record it. */
export function createDeliveryAttempt(deps: AttemptDeps, settings: AttemptSettings) {
  const env: Env = { ...deps, settings };
  return async function deliverOne(d: Deliverable, now: Date): Promise<AttemptOutcome> {
    const started = env.monotonic();
    const claim = await claimStep(env, d, now);
    if (!claim) return 'lost';
    const rule = ruleOf(d.announcement.kind);
    const at: Attempt = {
      d,
      rule,
      claim,
      now,
      clock: clockUntil(env, started + settings.leaseMs - 2 * settings.callTimeoutMs),
      mayBePosted: d.announcement.uncertain && !rule.repeatable,
      posting: false,
    };
    const outcome = await steps(env, at).catch((thrown: unknown) => failureStep(env, at, thrown));
    env.onOutcome?.(outcome, d.announcement.kind, env.monotonic() - started);
    return outcome;
  };
}

async function steps(env: Env, at: Attempt): Promise<AttemptOutcome> {
  if (!(await checkStep(env, at))) return 'skipped';
  const recovered = await recoverStep(env, at);
  if (recovered) return recovered;
  return recordStep(env, at, await postStep(env, at));
}

const backoff = (env: Env, a: Deliverable['announcement']) =>
  env.retryDelayMs(a.attempts + 1, env.random);

/**
 * Claims the announcement for the lease. Claimed ahead of the lane's pace: waits for it first.
 * Stopped meanwhile, gives it back untouched (the lane keeps its pace) for the next attempt.
 */
async function claimStep(
  env: Env,
  d: Deliverable,
  now: Date,
): Promise<AnnouncementClaim | undefined> {
  const { announcement: a, lane } = d;
  const { leaseMs, lookaheadMs } = env.settings;
  const horizonMs = env.settings.failures.commitHorizonMs;
  const claim = await env.store.claimAnnouncement(a, now, leaseMs, lane, lookaheadMs, horizonMs);
  if (!claim?.laneWaitMs) return claim;
  await sleep(claim.laneWaitMs);
  if (!env.stopping()) return claim;
  await env.store.markAnnouncementRetry(claim, {
    error: a.lastError ?? 'stopped before its turn',
    uncertain: a.uncertain,
    nextAttemptAt: now,
  });
  return undefined;
}

/** Whether it is still worth delivering: a reminder for an approval decided meanwhile is not. */
async function checkStep(env: Env, at: Attempt): Promise<boolean> {
  const { announcement: a, approval } = at.d;
  if (!at.rule.onlyWhilePending || (await worthReminding(env, approval))) return true;
  await env.store.markAnnouncementFinal(at.claim, 'skipped', 'decided before the reminder');
  env.logger.info(
    { announcement: a.id, kind: a.kind, djbh: a.djbh },
    'announcement skipped: decided before it went out',
  );
  return false;
}

/** The lifecycle's rule (still worth reminding), then the service asked once more. */
async function worthReminding(env: Env, approval: TrackedApproval): Promise<boolean> {
  if (!stillWorthReminding(approval)) return false;
  if (!env.stillPending) return true;
  // When the service cannot say, the recorded state (pending) stands.
  return env.stillPending(approval).catch(() => true);
}

/** Looks for an earlier attempt's post; undefined when this attempt is to post. */
async function recoverStep(env: Env, at: Attempt): Promise<AttemptOutcome | undefined> {
  if (!at.mayBePosted) return undefined;
  const { announcement: a, approval } = at.d;
  const earlier = await env.announcer.findDelivered(a, approval, at.clock);
  if (earlier) {
    warnIfOvertaken(env, await env.store.markAnnouncementSent(at.claim, earlier, at.now), a.id);
    env.logger.info(
      { announcement: a.id, kind: a.kind, djbh: a.djbh },
      'announcement was already posted; recorded it',
    );
    return 'recovered';
  }
  const horizonLeftMs = at.claim.commitHorizonLeftMs ?? 0;
  const next = afterSearchMissed({ horizonLeftMs, backoffMs: backoff(env, a), now: at.now });
  if (next.as === 'post') {
    at.mayBePosted = false;
    return undefined;
  }
  await env.store.markAnnouncementRetry(at.claim, {
    error: a.lastError ?? 'the earlier post may still appear',
    uncertain: true,
    nextAttemptAt: next.nextAttemptAt,
  });
  env.logger.debug(
    { announcement: a.id, horizonLeftMs, retryInMs: next.delayMs },
    'earlier post not found yet; Slack may still commit it, so looking again before posting',
  );
  return 'retry';
}

async function postStep(env: Env, at: Attempt): Promise<Posted> {
  at.clock.check();
  at.posting = true;
  return env.announcer.deliver(at.d.announcement, at.d.approval, at.clock);
}

async function recordStep(env: Env, at: Attempt, posted: Posted): Promise<AttemptOutcome> {
  const { announcement: a, approval, lane } = at.d;
  const { settings } = env;
  // The lane's pace counts from Slack's answer (so two posts reach Slack at least the interval
  // apart), and recording the post falls inside the interval rather than adding to it.
  const answered = env.monotonic();
  const laneWait = () =>
    posted.ts ? Math.max(0, settings.laneIntervalMs - (env.monotonic() - answered)) : 0;
  const current = await env.store.markAnnouncementSent(at.claim, posted, at.now, laneWait());
  warnIfOvertaken(env, current, a.id);
  // At info, so that the default level answers "was it posted?" for each approval.
  if (current) logDelivered(env, a, posted, a.attempts + 1);
  // Held here until the lane is free in the database too, so this replica comes back for the
  // lane's next post as soon as the fleet allows it, not an idle period later.
  if (posted.ts) env.pacer.pause(lane, laneWait() - settings.lookaheadMs + settings.paceMarginMs);
  void env.announcer.afterDelivered?.(a, approval).catch((error: unknown) => {
    env.logger.debug({ error: messageOf(error) }, 'refresh after a delivery failed');
  });
  return 'sent';
}

/** Records what the failure classification says of a failed attempt. */
async function failureStep(env: Env, at: Attempt, thrown: unknown): Promise<AttemptOutcome> {
  const a = at.d.announcement;
  const verdict = classifyFailure(
    {
      error: asAnnounceError(thrown),
      mayBePosted: at.mayBePosted,
      posting: at.posting,
      announcement: a,
      now: at.now,
      backoffMs: backoff(env, a),
    },
    env.settings.failures,
  );
  if (verdict.laneWaitMs > 0)
    env.pacer.pause(at.d.lane, verdict.laneWaitMs - env.settings.lookaheadMs);
  return recordVerdict(env, at, verdict);
}

async function recordVerdict(
  env: Env,
  at: Attempt,
  verdict: FailureVerdict,
): Promise<AttemptOutcome> {
  const a = at.d.announcement;
  switch (verdict.as) {
    case 'paused':
      await env.store.markAnnouncementRetry(at.claim, {
        error: verdict.error,
        uncertain: verdict.uncertain,
        nextAttemptAt: at.now,
      });
      await env.pauseEverything(verdict.error, at.now);
      return 'paused';
    case 'failed':
      await env.store.markAnnouncementFinal(at.claim, 'failed', verdict.reason);
      env.logger.error(
        { announcement: a.id, kind: a.kind, djbh: a.djbh, reason: verdict.reason },
        'announcement failed for good; re-drive it once the cause is fixed',
      );
      return 'failed';
    case 'retry': {
      const { error, uncertain, nextAttemptAt, commitHorizonMs } = verdict;
      const retry = { error, uncertain, nextAttemptAt };
      await env.store.markAnnouncementRetry(
        at.claim,
        commitHorizonMs !== undefined ? { ...retry, commitHorizonMs } : retry,
        verdict.laneWaitMs,
      );
      // A 429 is routine under load and honoured; other retries are worth a line at warn.
      env.logger[verdict.routine ? 'debug' : 'warn'](
        { announcement: a.id, kind: a.kind, djbh: a.djbh, error, retryInMs: verdict.delayMs },
        'announcement not delivered yet; will retry',
      );
      return 'retry';
    }
  }
}

/** One line per delivered announcement: what it was, where it went (or that nothing was posted). */
function logDelivered(
  env: Env,
  a: Deliverable['announcement'],
  posted: Posted,
  attempt: number,
): void {
  env.logger.info(
    {
      announcement: a.id,
      kind: a.kind,
      djbh: a.djbh,
      attempt,
      ...(posted.ts ? { channel: posted.channel, ts: posted.ts } : { postedNothing: true }),
      ...(posted.approverUnreachable ? { approverUnreachable: true } : {}),
    },
    'announcement delivered',
  );
}

function warnIfOvertaken(env: Env, current: boolean, id: string): void {
  // Our lease ran out and another attempt took over; it finds this post by its metadata.
  if (!current)
    env.logger.warn({ announcement: id }, 'a later attempt took this announcement over');
}

/** No call starts past the attempt's deadline: its last call ends before the lease does. */
function clockUntil(env: Env, deadline: number): AttemptClock {
  return {
    check() {
      if (env.monotonic() > deadline)
        throw new AnnounceError('the attempt ran out of time before its next call', {
          retryable: true,
        });
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Anything unexpected (a dropped database connection, a bug) may pass, and may have posted. */
function asAnnounceError(error: unknown): AnnounceError {
  if (error instanceof AnnounceError) return error;
  return new AnnounceError(messageOf(error), { retryable: true, uncertain: true, cause: error });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
