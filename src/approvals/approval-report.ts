/**
 * What a report says about approvals, declared once: what one row of the auditors' export means
 * (its columns, in order, each with what it holds), how long a decision took (in clock hours and
 * in the approver's working hours, working-hours.ts), and the owners' summary (count, share
 * approved, median and 90th percentile, open requests by age). Pure functions of what the store
 * streams; the operator command and `/approve report` only format them.
 */

import type { Decision } from './approval-types.ts';
import { loginKey } from './person.ts';
import type { Tracking } from './tracked-approval.ts';
import { type WorkingHours, workingMsBetween } from './working-hours.ts';

/**
 * Where an approval was started from: the form (`/approve`, the global shortcut), a message's
 * shortcut (its request joins that message's thread), a Workflow Builder step, or Request again.
 */
export const ENTRY_POINTS = ['form', 'message', 'workflow', 'request-again'] as const;
export type EntryPoint = (typeof ENTRY_POINTS)[number];

export function entryPointOf(approval: {
  functionExecutionId?: string | null;
  againOf?: string | null;
  threadTs?: string | null;
}): EntryPoint {
  if (approval.functionExecutionId) return 'workflow';
  if (approval.againOf) return 'request-again';
  if (approval.threadTs) return 'message';
  return 'form';
}

/** One approval as the store reads it for a report: its row, and when its decision was seen and told. */
export interface ApprovalRecord {
  djbh: string;
  requesterLogin: string;
  requesterSlackId: string;
  /** The current approver (the one the service names now). */
  approverLogin: string;
  /** How many times the service gave it to someone else (0: the one it was requested from). */
  approverTerm: number;
  /** Who had it before the current approver, oldest first (logins). */
  formerApprovers: readonly string[];
  channelId: string;
  templateId: string | null;
  templateName: string | null;
  createdAt: Date;
  decision: Decision;
  decidedBy: string | null;
  tracking: Tracking;
  /** When the app first saw the decision (it recorded it); null while none was seen. */
  decisionSeenAt: Date | null;
  /** When the decision's reply in the thread was posted; null while it was not (yet). */
  decisionToldAt: Date | null;
  remindersSent: number;
  escalatedToLogin: string | null;
  /** The approval this one was requested again from; null when it was not. */
  againOf: string | null;
  /** The approval that requested this one again; null until one did. */
  requestedAgainAs: string | null;
  title: string;
  note: string;
}

/**
 * Where an approval stands, for a report: `open` while the service has not decided it and the app
 * still follows it, `decided` (approved or rejected), `stopped` when the app no longer follows it
 * without a decision (it vanished from the service, or the app gave up on it).
 */
export type ReportStatus = 'open' | 'decided' | 'stopped';

export function statusOf(record: Pick<ApprovalRecord, 'decision' | 'tracking'>): ReportStatus {
  if (record.decision !== 'pending') return 'decided';
  return record.tracking === 'active' ? 'open' : 'stopped';
}

const HOUR_MS = 3_600_000;

/** How long the decision took, in ms: clock time and the approver's working time; null while undecided. */
export function timeToDecision(
  record: Pick<ApprovalRecord, 'createdAt' | 'decisionSeenAt' | 'decision'>,
  hours: WorkingHours | undefined,
  timeZone: string,
): { clockMs: number; workingMs: number } | null {
  if (record.decision === 'pending' || !record.decisionSeenAt) return null;
  const clockMs = Math.max(0, record.decisionSeenAt.getTime() - record.createdAt.getTime());
  // With working hours off, every hour is a working hour (as for reminders).
  const workingMs = hours
    ? workingMsBetween(record.createdAt, record.decisionSeenAt, timeZone, hours)
    : clockMs;
  return { clockMs, workingMs };
}

/** Hours with two decimals, as a report prints them. */
export const hoursOf = (ms: number): number => Math.round((ms / HOUR_MS) * 100) / 100;

/**
 * The export's columns, in order, with what each holds (docs/reports.md shows this list). Titles
 * and notes are personal data: they are only exported when asked for (`withText`).
 */
export const REPORT_COLUMNS = [
  ['number', 'the approval number in the approval service'],
  ['status', 'open, decided, or stopped (no longer followed without a decision)'],
  ['requester_login', 'who asked, as the service knows them'],
  ['requester_slack_id', 'who asked, on Slack'],
  ['approver_login', 'who has it now (who decided, once decided)'],
  ['approver_step', '1 for the approver it was requested from, 2 after the first handover, …'],
  ['handed_over_from', 'who had it before, oldest first, separated by spaces'],
  ['channel_id', 'where the request was posted'],
  ['channel_name', 'that channel’s name, when Slack could be asked (empty otherwise)'],
  ['template_id', 'the channel template it was made from (empty: none)'],
  ['template_name', 'that template’s name when the request was made'],
  ['started_at', 'when it was started (UTC, ISO 8601)'],
  ['decision', 'pending, approved or rejected'],
  ['decided_by', 'who decided, as the service says'],
  ['decision_seen_at', 'when the app first saw the decision (UTC, ISO 8601)'],
  ['decision_told_at', 'when the decision’s reply was posted in the thread (UTC, ISO 8601)'],
  ['hours_to_decision', 'from start to the decision being seen, in clock hours'],
  [
    'working_hours_to_decision',
    'the same, counting only working hours (WORKING_HOURS, WORKING_DAYS, WORKING_TIME_ZONE)',
  ],
  ['reminders', 'how many reminders the approver was sent'],
  ['escalated_to', 'whom it was escalated to (the approver’s leader); empty when not'],
  ['requested_again_from', 'the approval this one was requested again from (Request again)'],
  ['requested_again_as', 'the approval that requested this one again'],
  ['title', 'the title (only with --with-text)'],
  ['note', 'the note (only with --with-text)'],
] as const satisfies ReadonlyArray<readonly [string, string]>;

export type ReportColumn = (typeof REPORT_COLUMNS)[number][0];
const TEXT_COLUMNS: readonly ReportColumn[] = ['title', 'note'];

/** The columns of an export, with or without the title and note. */
export function reportColumns(withText: boolean): ReportColumn[] {
  return REPORT_COLUMNS.map(([name]) => name).filter((c) => withText || !TEXT_COLUMNS.includes(c));
}

/** One row of the export: its columns' values (text, a number, or null when there is none). */
export type ReportRow = Partial<Record<ReportColumn, string | number | null>>;

export interface ReportOptions {
  /** Working hours (undefined: off, every hour counts). */
  hours: WorkingHours | undefined;
  /** The approver's time zone (the default zone when their own is unknown). */
  zoneOf: (login: string) => string;
  withText: boolean;
  /** A channel's name, when it is known. */
  channelName?: (channelId: string) => string | undefined;
}

const iso = (at: Date | null): string | null => (at ? at.toISOString() : null);

/** One approval as a row of the export. */
export function reportRow(record: ApprovalRecord, options: ReportOptions): ReportRow {
  const took = timeToDecision(record, options.hours, options.zoneOf(record.approverLogin));
  const row: ReportRow = {
    number: record.djbh,
    status: statusOf(record),
    requester_login: record.requesterLogin,
    requester_slack_id: record.requesterSlackId,
    approver_login: record.approverLogin,
    approver_step: record.approverTerm + 1,
    handed_over_from: record.formerApprovers.join(' ') || null,
    channel_id: record.channelId,
    channel_name: options.channelName?.(record.channelId) ?? null,
    template_id: record.templateId,
    template_name: record.templateName,
    started_at: iso(record.createdAt),
    decision: record.decision,
    decided_by: record.decidedBy,
    decision_seen_at: record.decision === 'pending' ? null : iso(record.decisionSeenAt),
    decision_told_at: record.decision === 'pending' ? null : iso(record.decisionToldAt),
    hours_to_decision: took ? hoursOf(took.clockMs) : null,
    working_hours_to_decision: took ? hoursOf(took.workingMs) : null,
    reminders: record.remindersSent,
    escalated_to: record.escalatedToLogin,
    requested_again_from: record.againOf,
    requested_again_as: record.requestedAgainAs,
  };
  if (options.withText) {
    row.title = record.title;
    row.note = record.note;
  }
  return row;
}

/** The value at quantile `q` (0..1) of sorted numbers, by the nearest rank; undefined for none. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Which approvals a report reads: started in [from, to), or only those still open. */
export interface ReportRange {
  from?: Date;
  to?: Date;
  /** Only approvals still open (followed), whenever they started: what waits. */
  openOnly?: boolean;
}

/** How old an open approval is, as the summary and `/metrics` band it. */
export const AGE_BANDS = [
  { band: 'under-1d', belowMs: 24 * HOUR_MS },
  { band: '1d-3d', belowMs: 3 * 24 * HOUR_MS },
  { band: '3d-7d', belowMs: 7 * 24 * HOUR_MS },
  { band: 'over-7d', belowMs: Number.POSITIVE_INFINITY },
] as const;

export type AgeBand = (typeof AGE_BANDS)[number]['band'];

/** The band of an approval open since `since`, at `now` (clock time). */
export function ageBandOf(since: Date, now: Date): AgeBand {
  const age = now.getTime() - since.getTime();
  return AGE_BANDS.find((b) => age < b.belowMs)?.band ?? 'over-7d';
}

/** An open request older than this is named in the summary ("waiting over a week"). */
export const STALE_OPEN_MS = 7 * 24 * HOUR_MS;

/** What a summary groups by. */
export type SummaryBy = 'approver' | 'department' | 'template';
export const SUMMARY_BY: readonly SummaryBy[] = ['approver', 'department', 'template'];

/** One group's figures (or everything's). Times in working hours. */
export interface SummaryLine {
  group: string;
  count: number;
  decided: number;
  approved: number;
  /** Approved of decided, 0..1; null while none was decided. */
  approvedShare: number | null;
  medianHours: number | null;
  p90Hours: number | null;
  open: number;
  openOverAWeek: number;
}

/** The summary of a report: everything, each group (slowest median first), and the open ones by age. */
export interface Summary {
  total: SummaryLine;
  groups: SummaryLine[];
  openByAge: Record<AgeBand, number>;
}

interface Tally {
  count: number;
  decided: number;
  approved: number;
  open: number;
  openOverAWeek: number;
  /** Working ms of each decision: the quantiles need them all (8 bytes an approval). */
  took: number[];
}

const emptyTally = (): Tally => ({
  count: 0,
  decided: 0,
  approved: 0,
  open: 0,
  openOverAWeek: 0,
  took: [],
});

/**
 * Adds approvals one at a time (the store streams them), each with its group (the approver's
 * login, their department, or the template: the caller resolves it), and says the summary.
 */
export class SummaryBuilder {
  private readonly total = emptyTally();
  private readonly groups = new Map<string, Tally>();
  private readonly openByAge = Object.fromEntries(AGE_BANDS.map((b) => [b.band, 0])) as Record<
    AgeBand,
    number
  >;

  constructor(
    private readonly options: Pick<ReportOptions, 'hours' | 'zoneOf'>,
    private readonly now: Date,
  ) {}

  add(record: ApprovalRecord, group: string): void {
    let tally = this.groups.get(group);
    if (!tally) {
      tally = emptyTally();
      this.groups.set(group, tally);
    }
    const status = statusOf(record);
    if (status === 'open') this.openByAge[ageBandOf(record.createdAt, this.now)]++;
    const took = timeToDecision(
      record,
      this.options.hours,
      this.options.zoneOf(record.approverLogin),
    );
    for (const t of [this.total, tally]) {
      t.count++;
      if (record.decision !== 'pending') t.decided++;
      if (record.decision === 'approved') t.approved++;
      if (took) t.took.push(took.workingMs);
      if (status === 'open') {
        t.open++;
        if (this.now.getTime() - record.createdAt.getTime() > STALE_OPEN_MS) t.openOverAWeek++;
      }
    }
  }

  summary(): Summary {
    const groups = [...this.groups].map(([group, tally]) => lineOf(group, tally));
    // The slowest first: by median, then 90th percentile; groups with no decision last.
    groups.sort(
      (a, b) =>
        (b.medianHours ?? -1) - (a.medianHours ?? -1) ||
        (b.p90Hours ?? -1) - (a.p90Hours ?? -1) ||
        a.group.localeCompare(b.group),
    );
    return { total: lineOf('all', this.total), groups, openByAge: { ...this.openByAge } };
  }
}

function lineOf(group: string, tally: Tally): SummaryLine {
  const sorted = [...tally.took].sort((a, b) => a - b);
  const { decided } = tally;
  const at = (q: number) => {
    const ms = quantile(sorted, q);
    return ms === undefined ? null : hoursOf(ms);
  };
  return {
    group,
    count: tally.count,
    decided,
    approved: tally.approved,
    approvedShare: decided === 0 ? null : tally.approved / decided,
    medianHours: at(0.5),
    p90Hours: at(0.9),
    open: tally.open,
    openOverAWeek: tally.openOverAWeek,
  };
}

/**
 * Each approval's group for a summary: its approver's login, their department (the service's
 * lookup, asked once per approver; `(department unknown)` when it cannot say), or its template.
 */
export function groupOfBy(
  by: SummaryBy,
  departmentOf?: (login: string) => Promise<string>,
): (record: ApprovalRecord) => Promise<string> {
  const departments = new Map<string, Promise<string>>();
  // One approver is one group however the service cased their login (person.ts), named as first seen.
  const spellings = new Map<string, string>();
  return async (record) => {
    if (by === 'template') return record.templateName ?? '(no template)';
    const key = loginKey(record.approverLogin);
    if (by === 'approver' || !departmentOf) {
      if (!spellings.has(key)) spellings.set(key, record.approverLogin);
      return spellings.get(key) ?? record.approverLogin;
    }
    let department = departments.get(key);
    if (!department) {
      department = departmentOf(record.approverLogin).catch(() => '');
      departments.set(key, department);
    }
    return (await department) || '(department unknown)';
  };
}

/** The summary of the approvals streamed, each in its group. */
export async function summarise(
  records: AsyncIterable<ApprovalRecord>,
  groupOf: (record: ApprovalRecord) => Promise<string>,
  options: Pick<ReportOptions, 'hours' | 'zoneOf'>,
  now: Date,
): Promise<Summary> {
  const builder = new SummaryBuilder(options, now);
  for await (const record of records) builder.add(record, await groupOf(record));
  return builder.summary();
}
