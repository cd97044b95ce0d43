import type { ReportRange } from '../approvals/approval-report.ts';
import {
  type ApprovalRecord,
  groupOfBy,
  type ReportOptions,
  reportColumns,
  reportRow,
  SUMMARY_BY,
  type Summary,
  type SummaryBy,
  type SummaryLine,
  summarise,
} from '../approvals/approval-report.ts';
import { csvLine, tsvField } from './csv.ts';

export const REPORT_USAGE = `Usage:
  npm run report -- export [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format csv|json] [--with-text]
      one row per approval started in the range, to stdout (redirect it to a file): who asked,
      who decides and decided, where, which template, when, how long the decision took (in clock
      hours and in working hours), reminders, escalation, handovers, Request again. Titles and
      notes are personal data: only with --with-text. CSV fields starting like a formula
      (= + - @) get a ' in front, so a spreadsheet shows them as text.
  npm run report -- summary [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--by approver|department|template]
      count, share approved, median and 90th percentile time to decision in working hours, the
      slowest groups first, and open requests by age (those waiting over a week named).
Dates are UTC days, both included (--to 2026-11-30 reads up to the end of that day); without
them, everything retention has kept (RETENTION_DAYS: ended approvals older than that are gone).
Columns: docs/reports.md. Working hours are WORKING_HOURS, WORKING_DAYS and WORKING_TIME_ZONE, as
the app reads them. --by department asks the approval service (APPROVAL_BASE_URL, APPROVAL_APP_NAME,
APPROVAL_APP_KEY) once per approver. It reads DATABASE_URL (from the environment or .env, else
./data/approvals.db), as the app does, and never creates or migrates a database. In the image:
the same command, or node dist/operator/report-cli.js <arguments>.`;

export type ReportFormat = 'csv' | 'json';

export interface ReportRequest {
  verb: 'export' | 'summary';
  range: ReportRange;
  format: ReportFormat;
  withText: boolean;
  by: SummaryBy;
}

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A UTC day as its first instant; undefined for anything that is not one. */
function dayOf(text: string | undefined): Date | undefined {
  const m = text ? DATE.exec(text) : null;
  if (!m) return undefined;
  const at = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return at.toISOString().slice(0, 10) === text ? at : undefined;
}

/** The arguments as a request, or what is wrong with them (said with the usage). */
export function parseReportArgs(args: readonly string[]): ReportRequest | string {
  const [verb, ...rest] = args;
  if (verb !== 'export' && verb !== 'summary') return 'Say export or summary.';
  const request: ReportRequest = {
    verb,
    range: {},
    format: 'csv',
    withText: false,
    by: 'approver',
  };
  for (let i = 0; i < rest.length; i++) {
    const option = rest[i];
    if (option === '--with-text' && verb === 'export') {
      request.withText = true;
      continue;
    }
    const value = rest[i + 1];
    i++;
    if (option === '--from' || option === '--to') {
      const day = dayOf(value);
      if (!day)
        return `${option} wants a date as YYYY-MM-DD, e.g. 2026-11-01; was "${value ?? ''}"`;
      if (option === '--from') request.range.from = day;
      else request.range.to = new Date(day.getTime() + DAY_MS);
    } else if (option === '--format' && verb === 'export') {
      if (value !== 'csv' && value !== 'json')
        return `--format is csv or json; was "${value ?? ''}"`;
      request.format = value;
    } else if (option === '--by' && verb === 'summary') {
      if (!SUMMARY_BY.includes(value as SummaryBy))
        return `--by is ${SUMMARY_BY.join(', ')}; was "${value ?? ''}"`;
      request.by = value as SummaryBy;
    } else return `Unknown option for ${verb}: ${option}`;
  }
  const { from, to } = request.range;
  if (from && to && from >= to) return '--from is after --to: nothing could match.';
  return request;
}

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export function isReportWork(args: readonly string[]): boolean {
  return typeof parseReportArgs(args) !== 'string';
}

export interface ReportDeps {
  records: (range: ReportRange) => AsyncIterable<ApprovalRecord>;
  options: Omit<ReportOptions, 'withText' | 'channelName'>;
  /** A channel's name (Slack asked once per channel); undefined when it cannot be known. */
  channelName?: (channelId: string) => Promise<string | undefined>;
  /** The department of an approver (the service's lookup, cached); only for --by department. */
  departmentOf?: (login: string) => Promise<string>;
  now: () => Date;
  /** Writes text as is; resolves once it may write more (a slow pipe holds the export, not memory). */
  write: (text: string) => Promise<void> | void;
}

/** Runs `npm run report -- …`. Returns the process exit code. */
export async function reportCommand(args: readonly string[], deps: ReportDeps): Promise<number> {
  const request = parseReportArgs(args);
  if (typeof request === 'string') {
    await deps.write(`${request}\n${REPORT_USAGE}\n`);
    return 2;
  }
  if (request.verb === 'export') return exportReport(request, deps);
  if (request.by === 'department' && !deps.departmentOf) {
    await deps.write(
      '--by department asks the approval service for each approver’s department: set APPROVAL_BASE_URL, APPROVAL_APP_NAME and APPROVAL_APP_KEY.\n',
    );
    return 2;
  }
  const summary = await summarise(
    deps.records(request.range),
    groupOfBy(request.by, deps.departmentOf),
    deps.options,
    deps.now(),
  );
  await deps.write(`${summaryText(summary, request).join('\n')}\n`);
  return 0;
}

async function exportReport(request: ReportRequest, deps: ReportDeps): Promise<number> {
  const columns = reportColumns(request.withText);
  const names = new Map<string, string | undefined>();
  const options: ReportOptions = {
    ...deps.options,
    withText: request.withText,
    channelName: (id) => names.get(id),
  };
  const json = request.format === 'json';
  await deps.write(json ? '[' : `${csvLine(columns)}\n`);
  let count = 0;
  for await (const record of deps.records(request.range)) {
    if (deps.channelName && !names.has(record.channelId))
      names.set(record.channelId, await deps.channelName(record.channelId).catch(() => undefined));
    const row = reportRow(record, options);
    await deps.write(
      json
        ? `${count === 0 ? '\n' : ',\n'}${JSON.stringify(Object.fromEntries(columns.map((c) => [c, row[c] ?? null])))}`
        : `${csvLine(columns.map((c) => row[c]))}\n`,
    );
    count++;
  }
  if (json) await deps.write(count === 0 ? ']\n' : '\n]\n');
  return 0;
}

const percent = (share: number | null) => (share === null ? '–' : `${Math.round(share * 100)}%`);
const hours = (h: number | null) => (h === null ? '–' : `${h} h`);

/** One group's line; its name (a template's, an approver's) as text that stays in its column. */
function lineText(line: SummaryLine): string {
  return `${tsvField(line.group)}\t${line.count}\t${percent(line.approvedShare)}\t${hours(line.medianHours)}\t${hours(line.p90Hours)}\t${line.open}\t${line.openOverAWeek}`;
}

/** The summary as the operator reads it: a tab-separated table, slowest first. */
export function summaryText(
  summary: Summary,
  request: Pick<ReportRequest, 'range' | 'by'>,
): string[] {
  const { from, to } = request.range;
  const span = `${from ? from.toISOString().slice(0, 10) : 'the oldest kept'} to ${to ? new Date(to.getTime() - DAY_MS).toISOString().slice(0, 10) : 'now'}`;
  const bands = Object.entries(summary.openByAge)
    .map(([band, n]) => `${band} ${n}`)
    .join(', ');
  return [
    `${summary.total.count} approval${summary.total.count === 1 ? '' : 's'} started from ${span}, by ${request.by}; times in working hours`,
    `${request.by}\tcount\tapproved\tmedian\tp90\topen\topen over a week`,
    lineText(summary.total),
    ...summary.groups.map(lineText),
    `open by age: ${bands}`,
  ];
}
