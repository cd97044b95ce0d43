import type { NewTrackedApproval, TrackedApproval } from '../../src/approvals/tracked-approval.ts';

type Leaf = Date | readonly unknown[] | string | number | boolean | null | undefined;

/** Some fields of an approval's groups, each group merged into the one it overrides. */
export type Overrides<T> = T extends Leaf
  ? T
  : T extends object
    ? { [K in keyof T]?: Overrides<T[K]> }
    : T;

const isGroup = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** `base` with `overrides` laid over it, group by group (a date, a list or null replaces). */
export function withOverrides<T>(base: T, overrides: NoInfer<Overrides<T>> | undefined): T {
  if (!isGroup(base) || !isGroup(overrides))
    return (overrides === undefined ? base : overrides) as T;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides))
    if (value !== undefined) merged[key] = withOverrides(merged[key], value as never);
  return merged as T;
}

/** What starting an approval needs, with only what matters to a test given. */
export function newApproval(
  base: NewTrackedApproval,
  overrides: Overrides<NewTrackedApproval> = {},
): NewTrackedApproval {
  return withOverrides(base, overrides);
}

/** An approval as the store hands it out: pending, followed, nothing sent yet, unless overridden. */
export function trackedApproval(
  djbh: string,
  overrides: Overrides<TrackedApproval> = {},
): TrackedApproval {
  const createdAt = new Date('2026-11-21T10:00:00Z');
  return withOverrides<TrackedApproval>(
    {
      djbh,
      teamId: 'T1',
      request: {
        title: 't',
        note: 'n',
        locale: 'en-US',
        createdAt,
        template: null,
        againOf: null,
        requestedAgainAs: null,
      },
      parties: {
        requester: { login: 'a@corp.example', slackId: 'U1' },
        approver: {
          login: 'b@corp.example',
          slackId: null,
          term: 0,
          since: null,
          unreachableSince: null,
        },
        formerApprovers: [],
      },
      outcome: {
        decision: 'pending',
        decidedBy: null,
        tracking: 'active',
        unknownSince: null,
        changedAt: createdAt,
      },
      followUp: { remindersSent: 0, lastRemindedAt: null, escalatedAt: null, escalatedTo: null },
      slack: { channelId: 'C1', messageTs: null, threadTs: null, functionExecutionId: null },
    },
    overrides,
  );
}
