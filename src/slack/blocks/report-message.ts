import type { Summary, SummaryLine } from '../../approvals/approval-report.ts';
import type { Messages } from '../i18n.ts';
import { escapeMrkdwn } from './request-message.ts';

/** How many of the slowest approvers and departments `/approve report` names. */
export const SLOWEST_SHOWN = 5;

const percent = (share: number | null) => (share === null ? '–' : `${Math.round(share * 100)}%`);

function groupLines(title: string, lines: readonly SummaryLine[], t: Messages): string[] {
  const decided = lines.filter((l) => l.decided > 0).slice(0, SLOWEST_SHOWN);
  return [
    title,
    ...(decided.length === 0
      ? [t.reportNone]
      : decided.map((l) =>
          t.reportGroup(
            escapeMrkdwn(l.group),
            l.decided,
            t.reportHours(l.medianHours),
            t.reportHours(l.p90Hours),
            l.open,
          ),
        )),
  ];
}

/**
 * `/approve report`'s answer: the figures of the approvals started in the last `days`, the slowest
 * approvers and departments among them, and every request still open (`waiting`), however old.
 */
export function reportText(
  days: number,
  summaries: { byApprover: Summary; byDepartment: Summary; waiting: Summary },
  t: Messages,
): string {
  const { byApprover, byDepartment, waiting } = summaries;
  const { total } = byApprover;
  return [
    t.reportHeading(days),
    t.reportTotal(
      total.count,
      percent(total.approvedShare),
      t.reportHours(total.medianHours),
      t.reportHours(total.p90Hours),
    ),
    t.reportOpen(waiting.total.open, waiting.total.openOverAWeek, Object.values(waiting.openByAge)),
    ...groupLines(t.reportSlowestApprovers, byApprover.groups, t),
    ...groupLines(t.reportSlowestDepartments, byDepartment.groups, t),
  ].join('\n');
}
