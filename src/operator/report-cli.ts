import { WebClient } from '@slack/web-api';
import { createApprovalServiceClient } from '../approval-service/approval-service-client.ts';
import { cacheDepartments } from '../approvals/service-directory.ts';
import { isKnownTimeZone, type WorkingHours } from '../approvals/working-hours.ts';
import { withDotEnv, workingHoursOf } from '../config.ts';
import { streamApprovalRecords } from '../store/report-store.ts';
import { openOperatorDatabase } from './operator-database.ts';
import { isReportWork, REPORT_USAGE, reportCommand } from './report-command.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run report -- …` (in the image too; or `node dist/operator/report-cli.js …`): the auditors'
// export and the owners' summary, on the database the app uses (DATABASE_URL from the environment
// or .env, else the app's default file). It never creates or migrates a database. `--help` needs
// nothing: no database, no settings.

const args = process.argv.slice(2);
if (answeredWithUsage(args, REPORT_USAGE, isReportWork(args))) process.exit();
const env = withDotEnv(process.env);
const hours = workingHoursFrom(env);
if (typeof hours === 'string') {
  console.error(hours);
  process.exit(2);
}
const database = await openOperatorDatabase(env);
try {
  process.exitCode = await reportCommand(args, {
    records: (range) => streamApprovalRecords(database.db, range),
    // The approver's own zone is Slack's, which an export does not ask for each person: every
    // approver is counted in WORKING_TIME_ZONE (docs/reports.md).
    options: { hours, zoneOf: () => hours?.defaultTimeZone ?? 'UTC' },
    ...channelNames(env),
    ...departments(env),
    now: () => new Date(),
    write: (text) =>
      process.stdout.write(text)
        ? undefined
        : new Promise<void>((resolve) => process.stdout.once('drain', () => resolve())),
  });
} finally {
  await database.close();
}

/** The app's working hours (as the app reads them), undefined when off, or what is wrong. */
function workingHoursFrom(
  e: Record<string, string | undefined>,
): WorkingHours | undefined | string {
  const text = e.WORKING_HOURS || '09:00-18:00';
  const zone = e.WORKING_TIME_ZONE || 'UTC';
  if (!isKnownTimeZone(zone)) return `WORKING_TIME_ZONE: must be an IANA time zone; was "${zone}"`;
  if (text.trim().toLowerCase() === 'off') return undefined;
  return (
    workingHoursOf(text, e.WORKING_DAYS || 'mon-fri', zone) ??
    'WORKING_HOURS or WORKING_DAYS cannot be read (docs/configuration.md says how to write them)'
  );
}

/** Channel names from Slack (conversations.info), when the app's bot token is set. */
function channelNames(e: Record<string, string | undefined>) {
  if (!e.SLACK_BOT_TOKEN) return {};
  const slack = new WebClient(e.SLACK_BOT_TOKEN, {
    ...(e.SLACK_API_URL ? { slackApiUrl: e.SLACK_API_URL } : {}),
    timeout: 5000,
    retryConfig: { retries: 1 },
    rejectRateLimitedCalls: true,
  });
  return {
    channelName: async (channel: string) =>
      (await slack.conversations.info({ channel })).channel?.name,
  };
}

/** The service's department lookup, cached, when the service is configured. */
function departments(e: Record<string, string | undefined>) {
  if (!e.APPROVAL_BASE_URL || !e.APPROVAL_APP_NAME || !e.APPROVAL_APP_KEY) return {};
  const service = cacheDepartments(
    createApprovalServiceClient({
      baseUrl: e.APPROVAL_BASE_URL,
      appName: e.APPROVAL_APP_NAME,
      appKey: e.APPROVAL_APP_KEY,
    }),
  );
  return {
    departmentOf: async (login: string) => (await service.getDepartment(login)).department,
  };
}
