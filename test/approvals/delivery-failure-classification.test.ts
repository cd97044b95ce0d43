import { describe, expect, it } from 'vitest';
import {
  afterSearchMissed,
  classifyFailure,
  type FailureFacts,
  type FailurePolicy,
} from '../../src/approvals/delivery-failure.ts';

// What a failed delivery attempt means, as a table: no database, no Slack, no clock of its own.

const HOUR = 3_600_000;
const recorded = new Date('2026-11-27T08:00:00Z');
const policy: FailurePolicy = {
  retryForMs: 24 * HOUR,
  laneIntervalMs: 1000,
  commitHorizonMs: 60_000,
};

type ErrorFacts = FailureFacts['error'];
const err = (over: Partial<ErrorFacts> = {}): ErrorFacts => ({
  message: 'Slack: boom',
  retryable: true,
  uncertain: false,
  retryAfterMs: undefined,
  credentials: false,
  ...over,
});

const facts = (over: Partial<FailureFacts> = {}): FailureFacts => ({
  error: err(),
  mayBePosted: false,
  posting: true,
  announcement: { createdAt: recorded, redrivenAt: null, pausedMs: 0 },
  now: new Date(recorded.getTime() + HOUR),
  backoffMs: 4000,
  ...over,
});

const at = (ms: number) => new Date(recorded.getTime() + ms);

describe('what a failed delivery attempt means', () => {
  it.each([
    {
      case: 'a token Slack refuses pauses everything; nothing is failed and nothing waits',
      facts: facts({ error: err({ credentials: true, message: 'Slack: token_revoked' }) }),
      verdict: { as: 'paused', error: 'Slack: token_revoked', uncertain: false, laneWaitMs: 0 },
    },
    {
      case: 'a refused token after an earlier uncertain attempt stays uncertain',
      facts: facts({ error: err({ credentials: true }), mayBePosted: true }),
      verdict: { as: 'paused', uncertain: true },
    },
    {
      case: 'an answer that can never pass fails at once, with Slack’s reason',
      facts: facts({ error: err({ retryable: false, message: 'Slack: channel_not_found' }) }),
      verdict: { as: 'failed', reason: 'Slack: channel_not_found', laneWaitMs: 0 },
    },
    {
      case: 'one that may pass is retried after the backoff',
      facts: facts(),
      verdict: {
        as: 'retry',
        error: 'Slack: boom',
        uncertain: false,
        delayMs: 4000,
        nextAttemptAt: at(HOUR + 4000),
        routine: false,
        laneWaitMs: 0,
      },
    },
    {
      case: 'a timeout of our own post may have posted: retried uncertain, its horizon and the lane’s pace recorded',
      facts: facts({ error: err({ uncertain: true }) }),
      verdict: { as: 'retry', uncertain: true, commitHorizonMs: 60_000, laneWaitMs: 1000 },
    },
    {
      case: 'an uncertain failure before this attempt posted (a search) records no horizon',
      facts: facts({ error: err({ uncertain: true }), posting: false }),
      verdict: { as: 'retry', uncertain: true, commitHorizonMs: undefined },
    },
    {
      case: 'an earlier attempt that may have posted keeps the next one uncertain',
      facts: facts({ mayBePosted: true, posting: false }),
      verdict: { as: 'retry', uncertain: true, laneWaitMs: 0 },
    },
    {
      case: 'a 429 waits Slack’s Retry-After when longer than the backoff, quietly, its lane too',
      facts: facts({ error: err({ retryAfterMs: 30_000 }) }),
      verdict: { as: 'retry', delayMs: 30_000, routine: true, laneWaitMs: 30_000 },
    },
    {
      case: 'a 429 shorter than the backoff waits the backoff',
      facts: facts({ error: err({ retryAfterMs: 1000 }) }),
      verdict: { as: 'retry', delayMs: 4000, laneWaitMs: 1000 },
    },
    {
      case: 'a far-future Retry-After is capped by RETRY_AFTER_MAX',
      facts: facts({ error: err({ retryAfterMs: 10 * HOUR }) }),
      policy: { ...policy, retryAfterMaxMs: 60_000 },
      verdict: { as: 'retry', delayMs: 60_000, laneWaitMs: 60_000 },
    },
    {
      case: 'the last retry comes at the end of the window, never past it',
      facts: facts({ now: at(24 * HOUR - 1000) }),
      verdict: { as: 'retry', delayMs: 1000, nextAttemptAt: at(24 * HOUR) },
    },
    {
      case: 'still failing at the end of the window fails for good, saying for how long',
      facts: facts({ now: at(24 * HOUR) }),
      verdict: { as: 'failed', reason: 'still failing after 24 h: Slack: boom' },
    },
    {
      case: 'a window under an hour is said in minutes',
      facts: facts({ now: at(HOUR) }),
      policy: { ...policy, retryForMs: 30 * 60_000 },
      verdict: { as: 'failed', reason: 'still failing after 30 min: Slack: boom' },
    },
    {
      case: 'time paused fleet-wide does not count against the window',
      facts: facts({
        now: at(24 * HOUR),
        announcement: { createdAt: recorded, redrivenAt: null, pausedMs: 2 * HOUR },
      }),
      verdict: { as: 'retry', delayMs: 4000 },
    },
    {
      case: 'a re-drive starts the window again',
      facts: facts({
        now: at(30 * HOUR),
        announcement: { createdAt: recorded, redrivenAt: at(29 * HOUR), pausedMs: 0 },
      }),
      verdict: { as: 'retry', delayMs: 4000 },
    },
  ])('$case', ({ facts: f, policy: p, verdict }) => {
    const got = classifyFailure(f, p ?? policy);
    expect(got).toMatchObject(
      Object.fromEntries(Object.entries(verdict).filter(([, v]) => v !== undefined)),
    );
    for (const [key, value] of Object.entries(verdict))
      if (value === undefined) expect(got).not.toHaveProperty(key);
  });

  it.each([
    { horizonLeftMs: 0, expected: { as: 'post' } },
    { horizonLeftMs: -5, expected: { as: 'post' } },
    { horizonLeftMs: 10_000, expected: { as: 'look-again', delayMs: 4000 } },
    // Once more just after the horizon: never later than it.
    { horizonLeftMs: 1500, expected: { as: 'look-again', delayMs: 1500 } },
  ])(
    'a search that found nothing with $horizonLeftMs ms of horizon left: $expected.as',
    ({ horizonLeftMs, expected }) => {
      const now = at(0);
      const got = afterSearchMissed({ horizonLeftMs, backoffMs: 4000, now });
      expect(got).toMatchObject(expected);
      if (got.as === 'look-again')
        expect(got.nextAttemptAt).toEqual(new Date(now.getTime() + got.delayMs));
    },
  );
});
