import { ApprovalServiceError } from '../approval-service/approval-service-error.ts';
import type {
  ApprovalRepository,
  ClaimedApproval,
  UnchangedCheck,
} from '../approvals/approval-repository.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import {
  type AttentiveOptions,
  nextCheckAfterFailure,
  nextCheckAt,
  type ReminderOptions,
} from '../approvals/check-schedule.ts';
import type { EscalationOptions, EscalationTarget } from '../approvals/escalation.ts';
import { type SeenEvent, whatTheCheckSaw } from '../approvals/lifecycle/check-outcome.ts';
import { followUpsDue, heldForWorkingHours } from '../approvals/lifecycle/reminders.ts';
import type { TrackedApproval } from '../approvals/tracked-approval.ts';
import { type WorkingHours, zoneOrDefault } from '../approvals/working-hours.ts';
import { startLogContext } from '../log-context.ts';

export interface PollOptions {
  concurrency: number;
  maxIntervalMs: number;
  /** Young approvals checked often inside their approver's working hours (check-schedule.ts). */
  attentive?: AttentiveOptions;
  /**
   * A hot pass: only approvals whose approver just went to decide (hot), at most this many, so a
   * burst of clicks cannot take the service's capacity from the regular pass.
   */
  hotOnly?: { atMost: number };
  giveUpAfterMs: number;
  /** A pass claims no more approvals after this long, so that it ends within its tick. */
  passBudgetMs: number;
  /**
   * How long a claim holds an approval, on the database's clock: the pass's budget plus the
   * slowest check. A pass that dies releases its claims after this long.
   */
  leaseMs: number;
  /** An approval the service has not known for this long is no longer followed (default 24 h). */
  unknownForMs?: number;
  reminders?: ReminderOptions;
  /** Escalation to the approver's leader after unanswered reminders; absent when off. */
  escalation?: EscalationOptions;
  /**
   * Reminders and escalation only inside the approver's working hours (working-hours.ts); absent:
   * on the clock. One due outside them waits for the next check at their next working start.
   */
  workingHours?: WorkingHours;
}

export interface PollDeps {
  store: ApprovalRepository;
  service: Pick<ApprovalService, 'getStatus'>;
  /**
   * Whom to escalate an approval to (escalation.ts's escalationTarget, with the chat's lookups);
   * needed only with `options.escalation`.
   */
  escalationTarget?: (
    approval: TrackedApproval,
    signal?: AbortSignal,
  ) => Promise<EscalationTarget | undefined>;
  /** The approver's time zone (the chat's `tz`), for working hours; undefined when unknown. */
  approverTimeZone?: (approval: TrackedApproval) => Promise<string | undefined>;
  /**
   * The approver's time zone if known without asking anyone (a cache): the schedule reads it at
   * every check, where a lookup each time would cost more than the check.
   */
  approverZoneKnown?: (approval: TrackedApproval) => string | undefined;
  /** Told when a check stored something to announce (the dispatcher's wake-up). */
  announce?: () => void;
  logger: {
    debug(obj: object, msg: string): void;
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
  };
}

export interface PollCounts {
  checked: number;
  changed: number;
  failed: number;
  gaveUp: number;
  /** Closed by the service without a decision, or no longer known to it. */
  finished: number;
  reminded: number;
  /** Escalated to the approver's leader (or found to have nobody to escalate to). */
  escalated: number;
  /** Claimed but left for later because the service was found down during this pass. */
  deferred: number;
  /**
   * The numbers behind `changed` (and behind `finished` and `gaveUp`, in `endedDjbhs`), so that
   * the pass's log line says which approvals moved, not only how many; at most LISTED_DJBHS each.
   */
  changedDjbhs: string[];
  endedDjbhs: string[];
}

/**
 * How many approvals a pass claims in one statement, and how many unchanged checks it records in
 * one, at `concurrency` checks in flight (the store's benchmark measures these batches). Per
 * approval, a statement's own cost (and on Postgres its round trip and commit) shrinks with its
 * batch: claims of eight times `concurrency` and writes of four times it halved the store's CPU
 * per check against four times and once (bench/README).
 */
export function sweepBatches(concurrency: number): { claim: number; record: number } {
  return { claim: Math.max(8, concurrency * 8), record: concurrency * 4 };
}

/** How many numbers a pass's counts list; the counts themselves stay exact. */
export const LISTED_DJBHS = 50;

// After this many checks in a row find the service unavailable, the pass stops asking: one outage
// costs a few requests, not one per open approval, and nothing is posted to any thread.
const OUTAGE_THRESHOLD = 3;
const DAY_MS = 86_400_000;
// Of a claim's lease, what the escalation's lookups leave for recording the escalation and the
// check: two writes.
const RECORD_WITHIN_MS = 1000;

type Status = Awaited<ReturnType<PollDeps['service']['getStatus']>>;

/** An approval this pass claimed, with its schedule and claim, and when (the lease runs from then). */
interface Claimed extends ClaimedApproval {
  claimedAt: number;
}

/** One pass: what it was given, and what it has found so far. */
interface Pass {
  deps: PollDeps;
  options: PollOptions;
  now: Date;
  stop?: AbortSignal;
  counts: PollCounts;
  unchanged: ReturnType<typeof batchedRecorder>;
  /** Checks in a row that found the service unavailable. */
  unavailableInARow: number;
  /**
   * The first store error of any worker: the pass ends there (the other workers take nothing
   * more), and fails with it once every worker has finished what it had.
   */
  broken?: { error: unknown };
}

/**
 * One poll pass at `now`: keeps claiming approvals that are due (a few times `concurrency` at a
 * time) while its budget lasts, asks the service about each with `concurrency` checks in flight,
 * and records what each check saw as the lifecycle's event (approvals/lifecycle/), whose
 * transition the store applies with its announcements. Delivery happens elsewhere (the
 * dispatcher), so a slow chat never holds up the checks.
 *
 * `stop` (SIGTERM) ends the pass early: nothing more is claimed, what was claimed but not yet
 * started is given back at once (another replica takes it at its next pass, not after a lease),
 * escalation lookups under way are abandoned, and the checks under way finish and record; the
 * pass returns after its last write, so the database may close then.
 *
 * A store error in one check ends the pass the same way: the other workers take nothing more and
 * finish the check they have; what they checked is written, and the pass then fails with the
 * error (the schedule logs it and tries again at a later tick).
 */
export async function pollOnce(
  deps: PollDeps,
  options: PollOptions,
  now: Date,
  stop?: AbortSignal,
): Promise<PollCounts> {
  const pass: Pass = {
    deps,
    options,
    now,
    stop,
    counts: emptyCounts(),
    unchanged: batchedRecorder(deps.store, now, sweepBatches(options.concurrency).record),
    unavailableInARow: 0,
  };
  const claims = claimQueue(pass);
  // A pass is one unit: a worker that fails stops the others from taking more, and the pass
  // settles only after its last worker (so the next tick never overlaps it, and a stop that
  // waits for it may close the database then).
  const workers = Array.from({ length: options.concurrency }, async () => {
    try {
      for (let item = await claims.next(); item; item = await claims.next()) {
        const current = item;
        await startLogContext({ djbh: current.approval.djbh }, () => check(pass, current));
      }
    } catch (error) {
      pass.broken ??= { error };
    }
  });
  await Promise.all(workers);
  await endPass(pass, await claims.leftOver());
  return pass.counts;
}

function emptyCounts(): PollCounts {
  return {
    checked: 0,
    changed: 0,
    failed: 0,
    gaveUp: 0,
    finished: 0,
    reminded: 0,
    escalated: 0,
    deferred: 0,
    changedDjbhs: [],
    endedDjbhs: [],
  };
}

const list = (numbers: string[], djbh: string) => {
  if (numbers.length < LISTED_DJBHS) numbers.push(djbh);
};

const outage = (pass: Pass) => pass.unavailableInARow >= OUTAGE_THRESHOLD;

/**
 * The approvals a pass checks, claimed a batch at a time while the pass may claim: not broken,
 * not stopped, not in an outage, within its budget, and (a hot pass) within its share.
 */
function claimQueue(pass: Pass) {
  const { deps, options, now, stop } = pass;
  const stopClaimingAt = performance.now() + options.passBudgetMs;
  const batch = sweepBatches(options.concurrency).claim;
  const queue: Claimed[] = [];
  let exhausted = false;
  let claiming: Promise<void> | undefined;
  // A hot pass claims at most its share, and only hot approvals.
  let leftToClaim = options.hotOnly?.atMost ?? Number.POSITIVE_INFINITY;
  const mayClaim = () =>
    !pass.broken &&
    !exhausted &&
    leftToClaim > 0 &&
    !outage(pass) &&
    !stop?.aborted &&
    performance.now() <= stopClaimingAt;
  const claimMore = () => {
    const limit = Math.min(batch, leftToClaim);
    claiming ??= deps.store
      .claimDue(now, limit, options.leaseMs, options.hotOnly ? { hotOnly: true } : undefined)
      .then((rows) => {
        leftToClaim -= rows.length;
        if (rows.length === 0) exhausted = true;
        const claimedAt = performance.now();
        queue.push(...rows.map((row) => ({ ...row, claimedAt })));
      })
      .finally(() => {
        claiming = undefined;
      });
    return claiming;
  };
  return {
    async next(): Promise<Claimed | undefined> {
      for (;;) {
        if (pass.broken) return undefined;
        // The next batch is claimed while the last `concurrency` of this one are checked, so no
        // check waits for a claim's round trip (on Postgres it stalled every worker once a batch).
        if (queue.length <= options.concurrency && mayClaim()) void claimMore().catch(() => {});
        const item = queue.shift();
        if (item) return item;
        if (!mayClaim()) return undefined;
        await claimMore();
      }
    },
    /** What was claimed but never checked, once a claim still under way has come back. */
    async leftOver(): Promise<Claimed[]> {
      await claiming?.catch(() => {});
      return queue.splice(0);
    },
  };
}

/**
 * After the last worker: a claim made ahead that came back after the last check has its
 * approvals given back at once, and the pass returns only after that write, as after every other.
 * After a store error a release may fail too: those approvals are due again once their claim's
 * lease ends. What the workers checked is written (or, if that fails too, checked again once the
 * claims run out).
 */
async function endPass(pass: Pass, leftOver: readonly Claimed[]): Promise<void> {
  for (const left of leftOver) {
    pass.counts.deferred++;
    const released = pass.deps.store.releaseClaim(left.approval.djbh, left.claim);
    await (pass.broken ? released.catch(() => {}) : released);
  }
  await pass.unchanged.flush().catch((error: unknown) => {
    pass.broken ??= { error };
  });
  if (pass.broken) throw pass.broken.error;
}

/** Checks one claimed approval, unless it is too late or the service is down. */
async function check(pass: Pass, claimed: Claimed): Promise<void> {
  const { approval, claim, claimedAt } = claimed;
  const { deps, options, now, stop } = pass;
  // The claim's lease covers the pass's budget plus one check: a check that starts later could
  // outlive the claim and overlap another replica's. It is given back for the next pass, as is
  // one not started when the stop came.
  if (stop?.aborted || performance.now() > claimedAt + options.passBudgetMs) {
    pass.counts.deferred++;
    await deps.store.releaseClaim(approval.djbh, claim);
    return;
  }
  if (outage(pass)) {
    pass.counts.deferred++;
    await deps.store.recordCheck(
      approval.djbh,
      {
        now,
        nextCheckAt: nextCheckAfterFailure(1, now, options),
        failed: false,
        unknown: approval.outcome.unknownSince !== null,
      },
      claim,
    );
    return;
  }
  let status: Status;
  try {
    status = await deps.service.getStatus(approval.djbh);
  } catch (error) {
    await checkFailed(pass, claimed, error);
    return;
  }
  pass.unavailableInARow = 0;
  pass.counts.checked++;
  await record(pass, claimed, status);
}

async function checkFailed(
  pass: Pass,
  { approval, schedule, claim }: ClaimedApproval,
  error: unknown,
): Promise<void> {
  pass.counts.failed++;
  if (error instanceof ApprovalServiceError && error.kind === 'unavailable')
    pass.unavailableInARow++;
  pass.deps.logger.warn(
    { djbh: approval.djbh, error: error instanceof Error ? error.message : String(error) },
    'status check failed',
  );
  await pass.deps.store.recordCheck(
    approval.djbh,
    {
      now: pass.now,
      nextCheckAt: nextCheckAfterFailure(schedule.checkFailures + 1, pass.now, pass.options),
      failed: true,
    },
    claim,
  );
}

const scheduleNext = (pass: Pass, { approval, schedule }: ClaimedApproval) =>
  nextCheckAt(
    { createdAt: approval.request.createdAt, hotUntil: schedule.hotUntil },
    pass.now,
    pass.options,
    pass.deps.approverZoneKnown?.(approval),
  );

/** What a successful check saw, as the lifecycle's event (lifecycle/check-outcome.ts). */
async function record(pass: Pass, claimed: Claimed, status: Status): Promise<void> {
  const { approval } = claimed;
  const policy = {
    giveUpAfterMs: pass.options.giveUpAfterMs,
    unknownForMs: pass.options.unknownForMs ?? DAY_MS,
  };
  const seen = whatTheCheckSaw(approval, status, policy, pass.now, scheduleNext(pass, claimed));
  // A decision or a close by the service says the number is known after all.
  const closedByService =
    seen.kind === 'decided' || (seen.kind === 'closed' && seen.reason === 'ended');
  if (status.unknown && !closedByService)
    pass.deps.logger.warn(
      {
        djbh: approval.djbh,
        unknownSince: (approval.outcome.unknownSince ?? pass.now).toISOString(),
      },
      'the approval service does not know this approval number',
    );
  if (seen.kind === 'still-pending') return followUp(pass, claimed, status);
  await SEEN[seen.kind](pass, claimed, seen as never);
  pass.deps.announce?.();
}

type Seen = Exclude<SeenEvent, { kind: 'still-pending' }>;
type SeenRecorder<K extends Seen['kind']> = (
  pass: Pass,
  claimed: ClaimedApproval,
  event: Extract<Seen, { kind: K }>,
) => Promise<void>;

/** Each event a check may see, recorded (the store applies its transition), counted and logged. */
const SEEN: { [K in Seen['kind']]: SeenRecorder<K> } = {
  async decided({ deps, now, counts }, { approval, claim }, event) {
    counts.changed++;
    list(counts.changedDjbhs, approval.djbh);
    const { decision, decidedBy, ended, nextCheckAt } = event;
    const change = { decision, decidedBy, ended, now, nextCheckAt };
    if (await deps.store.recordDecision(approval.djbh, change, claim))
      deps.logger.info(
        { djbh: approval.djbh, from: approval.outcome.decision, decision, decidedBy, ended },
        'approval status changed',
      );
  },
  async closed({ deps, now, counts }, { approval, claim }, { reason }) {
    counts.finished++;
    list(counts.endedDjbhs, approval.djbh);
    if (!(await deps.store.finish(approval.djbh, reason, now, claim))) return;
    if (reason === 'ended')
      deps.logger.info(
        { djbh: approval.djbh },
        'approval closed by the service without a decision; no longer followed',
      );
    else
      deps.logger.info(
        { djbh: approval.djbh, unknownSince: (approval.outcome.unknownSince ?? now).toISOString() },
        'the approval service no longer knows this approval; no longer followed',
      );
  },
  async 'gave-up'({ deps, now, counts }, { approval, claim }) {
    counts.gaveUp++;
    list(counts.endedDjbhs, approval.djbh);
    const age = now.getTime() - approval.request.createdAt.getTime();
    if (await deps.store.giveUp(approval.djbh, now, claim))
      deps.logger.info(
        { djbh: approval.djbh, ageHours: Math.round(age / 3_600_000) },
        'gave up following the approval: nobody decided',
      );
  },
  async 'handed-over'({ deps, now, counts }, { approval, claim }, { handover, nextCheckAt }) {
    counts.changed++;
    list(counts.changedDjbhs, approval.djbh);
    const next = { ...handover, now, nextCheckAt };
    if (await deps.store.recordHandover(approval.djbh, next, claim))
      deps.logger.info(
        { djbh: approval.djbh, from: approval.parties.approver.login, to: handover.to.login },
        'approval handed to another approver',
      );
  },
};

/**
 * Still pending: a reminder or escalation if one is due (lifecycle/reminders.ts, the one place
 * that decides), and when to look again.
 */
async function followUp(pass: Pass, claimed: Claimed, status: Status) {
  const { approval, claim, claimedAt } = claimed;
  const { deps, options, now } = pass;
  const due = followUpsDue(approval, status, options, now);
  // Outside the approver's working hours both wait: the next check comes at their next start.
  const heldUntil =
    due.reminder !== undefined || due.escalation ? await heldFor(pass, approval) : undefined;
  if (heldUntil !== undefined)
    deps.logger.debug(
      { djbh: approval.djbh, until: heldUntil.toISOString() },
      'reminder or escalation waits for the approver’s working hours',
    );
  else {
    if (due.reminder !== undefined) await remind(pass, claimed, due.reminder);
    if (due.escalation && options.escalation)
      await escalate(pass, claimed, options.escalation, claimedAt);
  }
  const next = scheduleNext(pass, claimed);
  pass.unchanged.add({
    djbh: approval.djbh,
    claim,
    // Held for the approver's working hours: looked at again when they start.
    nextCheckAt: heldUntil && heldUntil < next ? heldUntil : next,
    unknown: status.unknown,
  });
}

/** The approver's next working start while `now` is outside their working hours. */
async function heldFor(pass: Pass, approval: TrackedApproval): Promise<Date | undefined> {
  const hours = pass.options.workingHours;
  if (!hours) return undefined;
  // A zone that cannot be looked up now is the default zone's: the rule still holds.
  const own = await pass.deps.approverTimeZone?.(approval).catch(() => undefined);
  const zone = zoneOrDefault(own, hours);
  return heldForWorkingHours(pass.now, zone, pass.options, pass.options.maxIntervalMs);
}

async function remind(
  pass: Pass,
  { approval, claim }: ClaimedApproval,
  reminder: number,
): Promise<void> {
  const { deps, now } = pass;
  if (await deps.store.recordReminder(approval.djbh, reminder, now, claim))
    deps.logger.info(
      { djbh: approval.djbh, reminder, approver: approval.parties.approver.login },
      'reminder due: the approver is reminded',
    );
  pass.counts.reminded++;
  deps.announce?.();
}

/**
 * Finds the approver's leader and records the escalation. A lookup that fails is tried again at
 * the next check; nothing is recorded meanwhile. Recording is fenced (the lifecycle's
 * transition), so a replica or a retried pass that gets here too records nothing more.
 */
async function escalate(
  pass: Pass,
  { approval, claim }: ClaimedApproval,
  escalation: EscalationOptions,
  claimedAt: number,
): Promise<void> {
  const { deps, now, stop } = pass;
  if (!deps.escalationTarget || stop?.aborted) return;
  // Due by what was recorded, but the store counts only reminders delivered a full interval ago
  // (one failed, or delivered late, does not count yet): ask first, so that an escalation the
  // store would refuse costs one query per check, not a walk up the chain.
  const unanswered = await deps.store.unansweredReminders(approval.djbh, {
    now,
    answerWithinMs: escalation.answerWithinMs,
  });
  if (unanswered < escalation.afterReminders) return;
  const to = await escalationTarget(pass, approval, claimedAt);
  if (to === false) return;
  const { afterReminders, answerWithinMs } = escalation;
  const recorded = await deps.store.recordEscalation(
    approval.djbh,
    { to: to ?? null, afterReminders, answerWithinMs, now },
    claim,
  );
  if (!recorded) return;
  pass.counts.escalated++;
  if (to) {
    deps.logger.info(
      { djbh: approval.djbh, to: to.login, afterReminders },
      'escalated to the approver’s leader',
    );
    deps.announce?.();
  } else
    deps.logger.info(
      { djbh: approval.djbh },
      'nobody above the approver to escalate to (not on Slack, away, or the requester)',
    );
}

/**
 * Whom to escalate to, looked up within what is left of the claim: undefined when nobody, false
 * when it cannot be known now (tried again at the next check).
 */
async function escalationTarget(
  pass: Pass,
  approval: TrackedApproval,
  claimedAt: number,
): Promise<EscalationTarget | undefined | false> {
  const { deps, options, stop } = pass;
  // The lookups (several of the service's and Slack's) end before the claim does, with time
  // left to record: past the lease another pass may hold the approval and look up the same.
  const timeLeft = claimedAt + options.leaseMs - RECORD_WITHIN_MS - performance.now();
  if (timeLeft <= 0) {
    deps.logger.info(
      { djbh: approval.djbh },
      'no time left in this check to look up whom to escalate to; will try again at the next check',
    );
    return false;
  }
  try {
    return await withinTime(
      (signal) => deps.escalationTarget?.(approval, signal) ?? Promise.resolve(undefined),
      timeLeft,
      stop,
    );
  } catch (error) {
    deps.logger.warn(
      { djbh: approval.djbh, error: error instanceof Error ? error.message : String(error) },
      'could not look up whom to escalate to; will try again at the next check',
    );
    return false;
  }
}

/**
 * Checks that found nothing new, recorded `size` at a time in one statement (a sweep writes one
 * for nearly every approval). The check that fills a batch starts its write and its worker goes
 * on; the pass writes what is left, and waits for every write, before it returns. A batch waits
 * at most for `size` more checks, well within the claims' lease; if the process dies first, the
 * claims run out and the next pass checks them again.
 */
function batchedRecorder(
  store: Pick<ApprovalRepository, 'recordChecks'>,
  now: Date,
  size: number,
): { add(check: UnchangedCheck): void; flush(): Promise<void> } {
  let pending: UnchangedCheck[] = [];
  // Batches being written: a worker goes on to its next check meanwhile; the pass waits for them
  // (and fails with the first that failed) before it returns.
  const writing = new Set<Promise<void>>();
  let failed: unknown;
  const write = () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const done: Promise<void> = store
      .recordChecks(batch, now)
      .then(
        () => {},
        (error: unknown) => {
          failed ??= error;
        },
      )
      .finally(() => writing.delete(done));
    writing.add(done);
  };
  return {
    add(check) {
      pending.push(check);
      if (pending.length >= size) write();
    },
    async flush() {
      write();
      await Promise.all(writing);
      if (failed !== undefined) throw failed;
    },
  };
}

/**
 * `work`, given up after `ms` or at `stop`: rejects then, and aborts the signal `work` was given,
 * so that it starts nothing more (a call already under way ends on its own timeout, and its answer
 * is unused).
 */
async function withinTime<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  stop?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const giveUp = (reason: Error) => {
      controller.abort(reason);
      reject(reason);
    };
    timer = setTimeout(
      () => giveUp(new Error(`Escalation lookups timed out after ${Math.round(ms)} ms`)),
      ms,
    );
    onStop = () => giveUp(new Error('Escalation lookups abandoned: the app is stopping'));
    stop?.addEventListener('abort', onStop, { once: true });
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    if (onStop) stop?.removeEventListener('abort', onStop);
  }
}
