import { ApprovalServiceError } from '../approval-service/approval-service-error.ts';
import type { ApprovalRepository, UnchangedCheck } from '../approvals/approval-repository.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import {
  type AttentiveOptions,
  nextCheckAfterFailure,
  nextCheckAt,
  type ReminderOptions,
  reminderDue,
} from '../approvals/check-schedule.ts';
import {
  type EscalationOptions,
  type EscalationTarget,
  escalationDue,
} from '../approvals/escalation.ts';
import { handoverOf } from '../approvals/handover.ts';
import type { TrackedApproval } from '../approvals/tracked-approval.ts';
import {
  isWorkingTime,
  nextWorkingStart,
  type WorkingHours,
  zoneOrDefault,
} from '../approvals/working-hours.ts';
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

/**
 * One poll pass at `now`: keeps claiming approvals that are due (a few times `concurrency` at a
 * time) while its budget lasts, asks the service about each with `concurrency` checks in flight,
 * and records each change together with its announcements. Delivery happens elsewhere (the
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
  const counts: PollCounts = {
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
  const list = (numbers: string[], djbh: string) => {
    if (numbers.length < LISTED_DJBHS) numbers.push(djbh);
  };
  const stopClaimingAt = performance.now() + options.passBudgetMs;
  const batches = sweepBatches(options.concurrency);
  const queue: Array<{ approval: TrackedApproval; claimedAt: number }> = [];
  let exhausted = false;
  let claiming: Promise<void> | undefined;
  let unavailableInARow = 0;
  const outage = () => unavailableInARow >= OUTAGE_THRESHOLD;
  const unchanged = batchedRecorder(deps.store, now, batches.record);
  const scheduleNext = (approval: TrackedApproval) =>
    nextCheckAt(approval, now, options, deps.approverZoneKnown?.(approval));
  // A hot pass claims at most its share, and only hot approvals.
  let leftToClaim = options.hotOnly?.atMost ?? Number.POSITIVE_INFINITY;

  // The first store error of any worker: the pass ends there (the other workers take nothing
  // more), and fails with it once every worker has finished what it had.
  let broken: { error: unknown } | undefined;

  const mayClaim = () =>
    !broken &&
    !exhausted &&
    leftToClaim > 0 &&
    !outage() &&
    !stop?.aborted &&
    performance.now() <= stopClaimingAt;
  const claimMore = () => {
    const limit = Math.min(batches.claim, leftToClaim);
    claiming ??= deps.store
      .claimDue(now, limit, options.leaseMs, options.hotOnly ? { hotOnly: true } : undefined)
      .then((rows) => {
        leftToClaim -= rows.length;
        if (rows.length === 0) exhausted = true;
        const claimedAt = performance.now();
        queue.push(...rows.map((approval) => ({ approval, claimedAt })));
      })
      .finally(() => {
        claiming = undefined;
      });
    return claiming;
  };

  async function next(): Promise<{ approval: TrackedApproval; claimedAt: number } | undefined> {
    for (;;) {
      if (broken) return undefined;
      // The next batch is claimed while the last `concurrency` of this one are checked, so no
      // check waits for a claim's round trip (on Postgres it stalled every worker once a batch).
      if (queue.length <= options.concurrency && mayClaim()) void claimMore().catch(() => {});
      const item = queue.shift();
      if (item) return item;
      if (!mayClaim()) return undefined;
      await claimMore();
    }
  }

  async function check({
    approval,
    claimedAt,
  }: {
    approval: TrackedApproval;
    claimedAt: number;
  }): Promise<void> {
    // The claim's lease covers the pass's budget plus one check: a check that starts later could
    // outlive the claim and overlap another replica's. It is given back for the next pass, as is
    // one not started when the stop came.
    if (stop?.aborted || performance.now() > claimedAt + options.passBudgetMs) {
      counts.deferred++;
      await deps.store.releaseClaim(approval.djbh, approval.checkClaim);
      return;
    }
    if (outage()) {
      counts.deferred++;
      await deps.store.recordCheck(
        approval.djbh,
        {
          now,
          nextCheckAt: nextCheckAfterFailure(1, now, options),
          failed: false,
          unknown: approval.unknownSince !== null,
        },
        approval.checkClaim,
      );
      return;
    }
    let status: Awaited<ReturnType<PollDeps['service']['getStatus']>>;
    try {
      status = await deps.service.getStatus(approval.djbh);
    } catch (error) {
      counts.failed++;
      if (error instanceof ApprovalServiceError && error.kind === 'unavailable')
        unavailableInARow++;
      deps.logger.warn(
        { djbh: approval.djbh, error: error instanceof Error ? error.message : String(error) },
        'status check failed',
      );
      await deps.store.recordCheck(
        approval.djbh,
        {
          now,
          nextCheckAt: nextCheckAfterFailure(approval.checkFailures + 1, now, options),
          failed: true,
        },
        approval.checkClaim,
      );
      return;
    }
    unavailableInARow = 0;
    counts.checked++;
    await record(approval, status, claimedAt);
  }

  /** What a successful check means; the give-up comes after it, so a last-minute decision counts. */
  async function record(
    approval: TrackedApproval,
    status: Awaited<ReturnType<PollDeps['service']['getStatus']>>,
    claimedAt: number,
  ): Promise<void> {
    const age = now.getTime() - approval.createdAt.getTime();
    if (status.decision !== approval.decision) {
      counts.changed++;
      list(counts.changedDjbhs, approval.djbh);
      const recorded = await deps.store.recordDecision(
        approval.djbh,
        {
          decision: status.decision,
          decidedBy: status.approver ?? approval.approverLogin,
          ended: status.ended,
          now,
          nextCheckAt: scheduleNext(approval),
        },
        approval.checkClaim,
      );
      if (recorded)
        deps.logger.info(
          {
            djbh: approval.djbh,
            from: approval.decision,
            decision: status.decision,
            decidedBy: status.approver ?? approval.approverLogin,
            ended: status.ended,
          },
          'approval status changed',
        );
      return deps.announce?.();
    }
    if (status.ended && status.decision === 'pending') {
      counts.finished++;
      list(counts.endedDjbhs, approval.djbh);
      if (await deps.store.finish(approval.djbh, 'ended', now, approval.checkClaim))
        deps.logger.info(
          { djbh: approval.djbh },
          'approval closed by the service without a decision; no longer followed',
        );
      return deps.announce?.();
    }
    if (status.unknown) {
      const since = approval.unknownSince ?? now;
      deps.logger.warn(
        { djbh: approval.djbh, unknownSince: since.toISOString() },
        'the approval service does not know this approval number',
      );
      if (now.getTime() - since.getTime() >= (options.unknownForMs ?? DAY_MS)) {
        counts.finished++;
        list(counts.endedDjbhs, approval.djbh);
        if (await deps.store.finish(approval.djbh, 'vanished', now, approval.checkClaim))
          deps.logger.info(
            { djbh: approval.djbh, unknownSince: since.toISOString() },
            'the approval service no longer knows this approval; no longer followed',
          );
        return deps.announce?.();
      }
    }
    if (age >= options.giveUpAfterMs) {
      counts.gaveUp++;
      list(counts.endedDjbhs, approval.djbh);
      if (await deps.store.giveUp(approval.djbh, now, approval.checkClaim))
        deps.logger.info(
          { djbh: approval.djbh, ageHours: Math.round(age / 3_600_000) },
          'gave up following the approval: nobody decided',
        );
      return deps.announce?.();
    }
    // The service gave it to someone else: they are the approver from now on (handover.ts).
    const handover = handoverOf(approval, status);
    if (handover) {
      counts.changed++;
      list(counts.changedDjbhs, approval.djbh);
      const next = { ...handover, now, nextCheckAt: scheduleNext(approval) };
      if (await deps.store.recordHandover(approval.djbh, next, approval.checkClaim))
        deps.logger.info(
          { djbh: approval.djbh, from: approval.approverLogin, to: handover.to.login },
          'approval handed to another approver',
        );
      return deps.announce?.();
    }
    const reminder =
      // No reminders to an approver Slack said cannot be reached (the requester was told).
      options.reminders &&
      status.decision === 'pending' &&
      !status.unknown &&
      !approval.approverUnreachableSince
        ? reminderDue(approval, now, options.reminders)
        : undefined;
    const escalating =
      options.escalation !== undefined &&
      status.decision === 'pending' &&
      !status.unknown &&
      escalationDue(approval, now, options.escalation, status.approver);
    // Outside the approver's working hours both wait: the next check comes at their next start.
    const heldUntil =
      reminder !== undefined || escalating ? await outsideWorkingHours(approval) : undefined;
    if (heldUntil !== undefined) {
      deps.logger.debug(
        { djbh: approval.djbh, until: heldUntil?.toISOString() },
        'reminder or escalation waits for the approver’s working hours',
      );
    } else if (reminder !== undefined) {
      if (await deps.store.recordReminder(approval.djbh, reminder, now, approval.checkClaim))
        deps.logger.info(
          { djbh: approval.djbh, reminder, approver: approval.approverLogin },
          'reminder due: the approver is reminded',
        );
      counts.reminded++;
      deps.announce?.();
    }
    if (escalating && heldUntil === undefined && options.escalation)
      await escalate(approval, options.escalation, claimedAt);
    const next = scheduleNext(approval);
    unchanged.add({
      djbh: approval.djbh,
      claim: approval.checkClaim,
      // Held for the approver's working hours: looked at again when they start.
      nextCheckAt: heldUntil && heldUntil < next ? heldUntil : next,
      unknown: status.unknown,
    });
  }

  /**
   * When `now` is outside the approver's working hours (in their own zone, else the default):
   * their next working start; undefined inside them, or without working hours.
   */
  async function outsideWorkingHours(approval: TrackedApproval): Promise<Date | undefined> {
    const hours = options.workingHours;
    if (!hours) return undefined;
    // A zone that cannot be looked up now is the default zone's: the rule still holds.
    const own = await deps.approverTimeZone?.(approval).catch(() => undefined);
    const zone = zoneOrDefault(own, hours);
    if (isWorkingTime(now, zone, hours)) return undefined;
    // Hours that name no working day: nothing is ever due; look again at the usual pace.
    return nextWorkingStart(now, zone, hours) ?? new Date(now.getTime() + options.maxIntervalMs);
  }

  /**
   * Finds the approver's leader and records the escalation. A lookup that fails is tried again at
   * the next check; nothing is recorded meanwhile. Recording is conditional (see the store), so a
   * replica or a retried pass that gets here too records nothing more.
   */
  async function escalate(
    approval: TrackedApproval,
    escalation: EscalationOptions,
    claimedAt: number,
  ): Promise<void> {
    if (!deps.escalationTarget || stop?.aborted) return;
    // Due by what was recorded, but the store counts only reminders delivered a full interval ago
    // (one failed, or delivered late, does not count yet): ask first, so that an escalation the
    // store would refuse costs one query per check, not a walk up the chain.
    const unanswered = await deps.store.unansweredReminders(approval.djbh, {
      now,
      answerWithinMs: escalation.answerWithinMs,
    });
    if (unanswered < escalation.afterReminders) return;
    // The lookups (several of the service's and Slack's) end before the claim does, with time
    // left to record: past the lease another pass may hold the approval and look up the same.
    const timeLeft = claimedAt + options.leaseMs - RECORD_WITHIN_MS - performance.now();
    if (timeLeft <= 0) {
      deps.logger.info(
        { djbh: approval.djbh },
        'no time left in this check to look up whom to escalate to; will try again at the next check',
      );
      return;
    }
    let to: EscalationTarget | undefined;
    try {
      to = await withinTime(
        (signal) => deps.escalationTarget?.(approval, signal) ?? Promise.resolve(undefined),
        timeLeft,
        stop,
      );
    } catch (error) {
      deps.logger.warn(
        { djbh: approval.djbh, error: error instanceof Error ? error.message : String(error) },
        'could not look up whom to escalate to; will try again at the next check',
      );
      return;
    }
    const recorded = await deps.store.recordEscalation(
      approval.djbh,
      {
        to: to ?? null,
        afterReminders: escalation.afterReminders,
        answerWithinMs: escalation.answerWithinMs,
        now,
      },
      approval.checkClaim,
    );
    if (!recorded) return;
    counts.escalated++;
    if (to) {
      deps.logger.info(
        { djbh: approval.djbh, to: to.login, afterReminders: escalation.afterReminders },
        'escalated to the approver’s leader',
      );
      deps.announce?.();
    } else
      deps.logger.info(
        { djbh: approval.djbh },
        'nobody above the approver to escalate to (not on Slack, away, or the requester)',
      );
  }

  // A pass is one unit: a worker that fails stops the others from taking more, and the pass
  // settles only after its last worker (so the next tick never overlaps it, and a stop that
  // waits for it may close the database then).
  const workers = Array.from({ length: options.concurrency }, async () => {
    try {
      for (let item = await next(); item; item = await next()) {
        const current = item;
        await startLogContext({ djbh: current.approval.djbh }, () => check(current));
      }
    } catch (error) {
      broken ??= { error };
    }
  });
  await Promise.all(workers);
  // A claim made ahead that came back after the last check: its approvals go back at once, and
  // the pass returns only after that write, as after every other. After a store error a release
  // may fail too: those approvals are due again once their claim's lease ends.
  await claiming?.catch(() => {});
  for (const left of queue.splice(0)) {
    counts.deferred++;
    const released = deps.store.releaseClaim(left.approval.djbh, left.approval.checkClaim);
    await (broken ? released.catch(() => {}) : released);
  }
  // What the other workers checked is written (or, if that fails too, checked again once the
  // claims run out).
  await unchanged.flush().catch((error: unknown) => {
    broken ??= { error };
  });
  if (broken) throw broken.error;
  return counts;
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
