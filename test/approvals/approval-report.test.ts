import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type ApprovalRecord,
  ageBandOf,
  entryPointOf,
  groupOfBy,
  quantile,
  REPORT_COLUMNS,
  reportColumns,
  reportRow,
  SummaryBuilder,
  statusOf,
  timeToDecision,
} from '../../src/approvals/approval-report.ts';
import { DEFAULT_WORKING_HOURS } from '../../src/approvals/working-hours.ts';

const HOUR = 3_600_000;
// Friday 27 November 2026, 17:00 UTC.
const FRIDAY_5PM = new Date('2026-11-27T17:00:00Z');

function record(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    djbh: 'R0001',
    requesterLogin: 'sam@corp.example',
    requesterSlackId: 'U0SAM',
    approverLogin: 'maria@corp.example',
    approverTerm: 0,
    formerApprovers: [],
    channelId: 'C0GENERAL',
    templateId: null,
    templateName: null,
    createdAt: FRIDAY_5PM,
    decision: 'pending',
    decidedBy: null,
    tracking: 'active',
    decisionSeenAt: null,
    decisionToldAt: null,
    remindersSent: 0,
    escalatedToLogin: null,
    againOf: null,
    requestedAgainAs: null,
    title: 'Laptop',
    note: 'for J. Doe',
    ...overrides,
  };
}

describe('time to decision', () => {
  it.each([
    // [started, seen, clock hours, working hours] with 09:00–18:00 Monday to Friday, UTC
    ['Friday 17:00 to Friday 17:30', FRIDAY_5PM, 0.5 * HOUR, 0.5, 0.5],
    ['Friday 17:00 to Monday 10:00', FRIDAY_5PM, 65 * HOUR, 65, 2],
    ['Saturday to Saturday', new Date('2026-11-28T10:00:00Z'), 3 * HOUR, 3, 0],
    ['Monday 09:00 to Tuesday 09:00', new Date('2026-11-30T09:00:00Z'), 24 * HOUR, 24, 9],
  ])('%s', (_name, started, tookMs, clock, working) => {
    const took = timeToDecision(
      record({
        createdAt: started,
        decision: 'approved',
        decisionSeenAt: new Date(started.getTime() + tookMs),
      }),
      DEFAULT_WORKING_HOURS,
      'UTC',
    );
    expect(took).toEqual({ clockMs: clock * HOUR, workingMs: working * HOUR });
  });

  it('counts in the approver’s zone: 17:00 UTC is 18:00 in Berlin, after hours', () => {
    const took = timeToDecision(
      record({ decision: 'rejected', decisionSeenAt: new Date(FRIDAY_5PM.getTime() + HOUR) }),
      DEFAULT_WORKING_HOURS,
      'Europe/Berlin',
    );
    expect(took).toEqual({ clockMs: HOUR, workingMs: 0 });
  });

  it('is every hour with working hours off, and none while undecided', () => {
    const decided = record({
      decision: 'approved',
      decisionSeenAt: new Date(FRIDAY_5PM.getTime() + 65 * HOUR),
    });
    expect(timeToDecision(decided, undefined, 'UTC')).toEqual({
      clockMs: 65 * HOUR,
      workingMs: 65 * HOUR,
    });
    expect(timeToDecision(record(), DEFAULT_WORKING_HOURS, 'UTC')).toBeNull();
  });
});

describe('a report row', () => {
  it.each([
    ['pending', 'active', 'open'],
    ['pending', 'finished', 'stopped'],
    ['pending', 'gave-up', 'stopped'],
    ['approved', 'finished', 'decided'],
    ['rejected', 'active', 'decided'],
  ] as const)('%s and %s is %s', (decision, tracking, status) => {
    expect(statusOf({ decision, tracking })).toBe(status);
  });

  it('has the title and note only when asked for', () => {
    expect(reportColumns(false)).not.toContain('title');
    expect(reportColumns(true).slice(-2)).toEqual(['title', 'note']);
    const options = { hours: DEFAULT_WORKING_HOURS, zoneOf: () => 'UTC' };
    expect(reportRow(record(), { ...options, withText: false })).not.toHaveProperty('title');
    expect(reportRow(record(), { ...options, withText: true })).toMatchObject({
      title: 'Laptop',
      note: 'for J. Doe',
    });
  });

  it('names the step, who had it before, and the times of a decided one', () => {
    const row = reportRow(
      record({
        approverTerm: 2,
        formerApprovers: ['a@corp.example', 'b@corp.example'],
        decision: 'approved',
        decidedBy: 'maria@corp.example',
        tracking: 'finished',
        decisionSeenAt: new Date('2026-11-30T10:00:00Z'),
        decisionToldAt: new Date('2026-11-30T10:00:02Z'),
      }),
      { hours: DEFAULT_WORKING_HOURS, zoneOf: () => 'UTC', withText: false },
    );
    expect(row).toMatchObject({
      approver_step: 3,
      handed_over_from: 'a@corp.example b@corp.example',
      started_at: '2026-11-27T17:00:00.000Z',
      decision_seen_at: '2026-11-30T10:00:00.000Z',
      decision_told_at: '2026-11-30T10:00:02.000Z',
      hours_to_decision: 65,
      working_hours_to_decision: 2,
      status: 'decided',
    });
  });
});

describe('quantiles and age bands', () => {
  it.each([
    [[], 0.5, undefined],
    [[7], 0.5, 7],
    [[7], 0.9, 7],
    [[1, 2, 3, 4], 0.5, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5, 5],
  ])('%j at %d is %s (nearest rank)', (values, q, expected) => {
    expect(quantile(values, q)).toBe(expected);
  });

  it.each([
    [0, 'under-1d'],
    [23.9, 'under-1d'],
    [24, '1d-3d'],
    [71, '1d-3d'],
    [72, '3d-7d'],
    [168, 'over-7d'],
    [10_000, 'over-7d'],
  ])('open %d hours is %s', (hours, band) => {
    expect(ageBandOf(FRIDAY_5PM, new Date(FRIDAY_5PM.getTime() + hours * HOUR))).toBe(band);
  });
});

describe('a summary', () => {
  it('counts, shares, quantiles and open ones per group, slowest first', () => {
    const now = new Date('2026-12-10T12:00:00Z');
    const builder = new SummaryBuilder({ hours: undefined, zoneOf: () => 'UTC' }, now);
    const decided = (hours: number, decision: 'approved' | 'rejected') =>
      record({
        decision,
        tracking: 'finished',
        decisionSeenAt: new Date(FRIDAY_5PM.getTime() + hours * HOUR),
      });
    builder.add(decided(1, 'approved'), 'fast');
    builder.add(decided(3, 'rejected'), 'fast');
    builder.add(decided(10, 'approved'), 'slow');
    builder.add(decided(20, 'approved'), 'slow');
    builder.add(decided(30, 'approved'), 'slow');
    // Open for 13 days, and for 2 hours.
    builder.add(record(), 'slow');
    builder.add(record({ createdAt: new Date(now.getTime() - 2 * HOUR) }), 'fast');
    const summary = builder.summary();
    expect(summary.groups.map((g) => g.group)).toEqual(['slow', 'fast']);
    expect(summary.groups[0]).toMatchObject({
      count: 4,
      decided: 3,
      approved: 3,
      approvedShare: 1,
      medianHours: 20,
      p90Hours: 30,
      open: 1,
      openOverAWeek: 1,
    });
    expect(summary.groups[1]).toMatchObject({
      count: 3,
      approvedShare: 0.5,
      medianHours: 1,
      p90Hours: 3,
      open: 1,
      openOverAWeek: 0,
    });
    expect(summary.total).toMatchObject({ count: 7, decided: 5, approved: 4, medianHours: 10 });
    expect(summary.openByAge).toEqual({ 'under-1d': 1, '1d-3d': 0, '3d-7d': 0, 'over-7d': 1 });
  });
});

describe('a summary by approver', () => {
  it('counts one approver once however the service cased their login', async () => {
    const byApprover = groupOfBy('approver');
    const groups = await Promise.all(
      ['maria@corp.example', 'Maria@Corp.example', 'MARIA@corp.example'].map((approverLogin) =>
        byApprover(record({ approverLogin })),
      ),
    );
    expect(new Set(groups)).toEqual(new Set(['maria@corp.example']));
  });
});

describe('docs/reports.md', () => {
  it('documents every column of the export', () => {
    const doc = readFileSync(new URL('../../docs/reports.md', import.meta.url), 'utf8');
    for (const [column] of REPORT_COLUMNS) expect(doc, column).toContain(`\`${column}\``);
  });
});

describe('entry points', () => {
  it.each([
    [{}, 'form'],
    [{ threadTs: '1700000000.000100' }, 'message'],
    [{ functionExecutionId: 'Fx01', threadTs: null }, 'workflow'],
    [{ againOf: 'R0001', threadTs: '1700000000.000100' }, 'request-again'],
  ] as const)('%j is %s', (approval, entryPoint) => {
    expect(entryPointOf(approval)).toBe(entryPoint);
  });
});
