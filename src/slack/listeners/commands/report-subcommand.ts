import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { workspaceParties } from '../../../approvals/access-policy.ts';
import { groupOfBy, summarise } from '../../../approvals/approval-report.ts';
import { logFailure } from '../../../logger.ts';
import { reportText } from '../../blocks/report-message.ts';
import { buildTextMessage } from '../../blocks/status-message.ts';
import { messagesFor } from '../../i18n.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Args = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
type Deps = Pick<SlackDeps, 'people' | 'service' | 'logger' | 'access' | 'reports' | 'now'>;

/** The span `/approve report` covers: the last 30 days. */
export const REPORT_DAYS = 30;

/**
 * `/approve report`: how long approvals took in the last 30 days, the slowest approvers and
 * departments (the service's lookup, cached), and every request still open, however old; for the workspace's admins and
 * owners (WHO_MAY['see-reports']), a clear refusal for anyone else. Only the person sees it.
 */
export async function reportSubcommand(deps: Deps, args: Args): Promise<void> {
  await args.ack();
  const userId = args.command.user_id;
  const t = messagesFor((await deps.people.get(userId)).locale);
  const say = async (text: string): Promise<void> => {
    const { text: fallback, blocks } = buildTextMessage(text);
    await args.respond({ response_type: 'ephemeral', text: fallback, blocks: blocks as never });
  };
  const verdict = await deps.access.check('see-reports', workspaceParties(), userId);
  if (verdict !== 'allowed') return say(verdict === 'unsure' ? t.reportUnsure : t.reportRefused);
  if (!deps.reports) return say(t.reportFailed);
  const now = deps.now();
  const range = { from: new Date(now.getTime() - REPORT_DAYS * 86_400_000) };
  const { records, options } = deps.reports;
  try {
    const department = async (login: string) =>
      (await deps.service.getDepartment(login)).department;
    // What waits is every open request, however long ago it started: the oldest matter most.
    const [byApprover, byDepartment, waiting] = await Promise.all([
      summarise(records(range), groupOfBy('approver'), options, now),
      summarise(records(range), groupOfBy('department', department), options, now),
      summarise(records({ openOnly: true }), groupOfBy('approver'), options, now),
    ]);
    return say(reportText(REPORT_DAYS, { byApprover, byDepartment, waiting }, t));
  } catch (error) {
    logFailure(deps.logger, error, { user: userId }, '/approve report failed');
    return say(t.reportFailed);
  }
}
