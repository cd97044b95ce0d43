import type { AnnouncementDispatcher } from '../approvals/announcement-dispatcher.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import { awayOf } from '../approvals/away-rule.ts';
import { ATTENTIVE_DEFAULTS, HOT } from '../approvals/check-schedule.ts';
import { escalationTarget } from '../approvals/escalation.ts';
import type { PurgeCounts } from '../approvals/retention.ts';
import type { TrackedApproval } from '../approvals/tracked-approval.ts';
import type { Config } from '../config.ts';
import type { Stoppable } from '../lifecycle.ts';
import { type Liveness, POLL_LOOP } from '../liveness.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { type PollCounts, pollOnce } from '../poller/poll-once.ts';
import { startPollSchedule } from '../poller/poll-schedule.ts';
import { startRetentionSchedule } from '../poller/retention-schedule.ts';
import type { Identities } from '../slack/people/identities.ts';
import type { SlackPeople } from '../slack/people/slack-people.ts';
import { reprobeService } from './service.ts';
import type { Stores } from './stores.ts';

export interface ScheduleDeps {
  logger: Logger;
  now: () => Date;
  stores: Pick<Stores, 'approvals' | 'retention'>;
  service: ApprovalService;
  metrics: Metrics;
  dispatcher: AnnouncementDispatcher;
  /** The sweep of workflow confirmations: unanswered ones end, Starts handed on start. */
  sweepSteps: (now: Date) => Promise<unknown>;
  /** Found with the outbox's own Slack client (see createDelivery). */
  background: { people: SlackPeople; identities: Identities };
  lastServiceOk: () => number | undefined;
  /** Told how long a pass has run past its lease (liveness.ts's POLL_LOOP). */
  liveness?: Pick<Liveness, 'watch'>;
}

/**
 * The scheduled work: the poll pass (with the sweep of unanswered workflow confirmations), the
 * retention purge and the service's re-probe. `start` is what the lifecycle calls; `pollOnce`
 * and `purge` run a pass now, as the schedule would.
 */
export function createSchedules(config: Config, deps: ScheduleDeps) {
  const { logger, now, service, metrics, sweepSteps } = deps;
  const pollDeps = pollDepsOf(deps);
  const pollOptions = pollOptionsOf(config);
  let retention: ReturnType<typeof startRetentionSchedule> | undefined;
  return {
    start(): Stoppable[] {
      const checks = startPollSchedule(
        pollDeps,
        {
          ...pollOptions,
          cron: config.poll.cron,
          onPass: (ms) => metrics.pollPass(ms),
          // Unanswered confirmations of workflow steps end, and Starts a stopping replica handed
          // on start, on the same beat as the checks.
          alongside: sweepSteps,
        },
        now,
      );
      // Approvals whose approver just went to the service to decide, every few seconds (HOT).
      const hotCron = config.poll.hotCron;
      const hotChecks = hotCron
        ? [startPollSchedule(pollDeps, { ...pollOptions, cron: hotCron, hotOnly }, now)]
        : [];
      // Either pass still running past its lease is stuck (liveness.ts's POLL_LOOP).
      const passes = [checks, ...hotChecks];
      deps.liveness?.watch(POLL_LOOP, () =>
        Math.max(0, ...passes.map((p) => p.runningForMs() - pollOptions.leaseMs)),
      );
      retention = startRetentionSchedule(
        { store: deps.stores.retention, logger, onPurge: metrics.purged },
        { retentionDays: config.retentionDays },
        now,
      );
      return [...passes, retention, reprobeService(service, logger, deps.lastServiceOk)];
    },
    pollOnce: (at: Date): Promise<PollCounts> => pollOnce(pollDeps, pollOptions, at),
    /** One hot pass at `at`, as the hot schedule runs it. */
    hotPass: (at: Date): Promise<PollCounts> => pollOnce(pollDeps, { ...pollOptions, hotOnly }, at),
    purge: async (at: Date): Promise<PurgeCounts | undefined> => retention?.runOnce(at),
  };
}

export type Schedules = ReturnType<typeof createSchedules>;

/** A hot pass checks at most HOT.perPass approvals: a burst of clicks cannot starve the rest. */
const hotOnly = { atMost: HOT.perPass };

function pollDepsOf(deps: ScheduleDeps) {
  const { service, now } = deps;
  const { people, identities } = deps.background;
  return {
    store: deps.stores.approvals,
    service,
    logger: deps.logger,
    announce: deps.dispatcher.wake,
    // The approver's account now (a link may have moved them since the approval started).
    approverTimeZone: async (approval: TrackedApproval) => {
      const chatId = await identities.slackUserOf(approval.parties.approver.login);
      return chatId ? (await people.get(chatId)).timeZone : undefined;
    },
    // A hint for how often to check, never an address: the zone of the account the approval last
    // recorded (kept current on link and unlink), if Slack's answer is cached; else the default.
    approverZoneKnown: (approval: TrackedApproval) =>
      approval.parties.approver.slackId
        ? people.cached(approval.parties.approver.slackId)?.timeZone
        : undefined,
    escalationTarget: (approval: TrackedApproval, signal?: AbortSignal) =>
      escalationTarget(
        {
          service,
          findChatUser: (login) => identities.slackUserOf(login),
          awayOf: async (chatId) => awayOf((await people.get(chatId)).presence, now()),
        },
        approval,
        signal,
      ),
  };
}

function pollOptionsOf(config: Config) {
  return {
    concurrency: config.poll.concurrency,
    maxIntervalMs: config.poll.maxIntervalMs,
    giveUpAfterMs: config.poll.giveUpAfterMs,
    passBudgetMs: config.poll.passBudgetMs,
    // A check may take three timeouts (two retries) and a little backoff.
    leaseMs: config.poll.passBudgetMs + 3 * config.approval.timeoutMs + 2000,
    ...(config.reminders.max > 0 ? { reminders: config.reminders } : {}),
    ...(config.workingHours
      ? {
          workingHours: config.workingHours,
          attentive: { hours: config.workingHours, ...ATTENTIVE_DEFAULTS },
        }
      : {}),
    ...(config.escalateAfterReminders > 0 && config.reminders.max > 0
      ? {
          escalation: {
            afterReminders: config.escalateAfterReminders,
            answerWithinMs: config.reminders.intervalMs,
          },
        }
      : {}),
  };
}
