import type { Outbox } from '../approvals/outbox.ts';
import type { ApprovalStory } from '../store/approval-story.ts';

export const ANNOUNCEMENTS_USAGE = `Usage:
  npm run announcements -- failed            list announcements that failed for good
  npm run announcements -- redrive <id>…     make these failed announcements pending again
                                             (exits 1 when none was, because an id is unknown)
  npm run announcements -- redrive --all     make every failed announcement pending again
  npm run announcements -- story <djbh>      one approval's story: what was recorded of it, and
                                             each of its announcements with its state and times
                                             (exits 1 when the number is unknown)
It reads DATABASE_URL (from the environment or .env, else ./data/approvals.db), as the app does,
and never creates or migrates a database. In the image: the same command, or
node dist/operator/cli.js <arguments>.`;

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export const isAnnouncementsWork = (args: readonly string[]): boolean =>
  args[0] === 'failed' ||
  (args[0] === 'redrive' && args.length > 1) ||
  (args[0] === 'story' && args.length === 2);

export interface AnnouncementsDeps {
  store: Pick<Outbox, 'failedAnnouncements' | 'redriveAnnouncements'>;
  /** The state of each named announcement that exists (see store/announcement-states.ts). */
  states: (ids: readonly string[]) => Promise<Map<string, string>>;
  /** One approval with its announcements (see store/approval-story.ts). */
  story?: (djbh: string) => Promise<ApprovalStory | undefined>;
  now: () => Date;
  out: (line: string) => void;
}

/**
 * The operator's view of the outbox: what failed for good and why, and re-driving it once the
 * cause is fixed (the app delivers re-driven announcements within a second or so, with the usual
 * check for an earlier post first). Returns the process exit code.
 */
export async function announcementsCommand(
  args: string[],
  deps: AnnouncementsDeps,
): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'failed') return listFailed(deps);
  if (verb === 'redrive' && rest.length > 0) return redrive(rest, deps);
  const [djbh] = rest;
  if (verb === 'story' && rest.length === 1 && djbh && deps.story)
    return tellStory(djbh, deps.story, deps.out);
  deps.out(ANNOUNCEMENTS_USAGE);
  return 2;
}

async function listFailed(deps: AnnouncementsDeps): Promise<number> {
  const failed = await deps.store.failedAnnouncements(1000);
  deps.out(`${failed.length} failed announcement${failed.length === 1 ? '' : 's'}`);
  for (const a of failed) {
    deps.out(
      `${a.id}\t${a.createdAt.toISOString()}\t${a.attempts} attempt(s)\t${printable(a.lastError ?? '')}`,
    );
  }
  return 0;
}

async function redrive(rest: string[], deps: AnnouncementsDeps): Promise<number> {
  const all = rest.includes('--all');
  const ids = rest.filter((r) => r !== '--all');
  if (all && ids.length > 0) {
    deps.out('Give either --all or ids, not both.');
    return 2;
  }
  // Read before the re-drive, which makes the failed ones pending like any other.
  const states = await deps.states(ids);
  const count = await deps.store.redriveAnnouncements(deps.now(), all ? undefined : ids);
  deps.out(`${count} announcement${count === 1 ? '' : 's'} pending again`);
  const unknown = ids.filter((id) => !states.has(id));
  const notFailed = ids.filter((id) => states.has(id) && states.get(id) !== 'failed');
  if (unknown.length > 0)
    deps.out(
      `Unknown id${unknown.length === 1 ? '' : 's'}, no such announcement: ${unknown.join(', ')} (\`npm run announcements -- failed\` lists the failed ones with their ids)`,
    );
  if (notFailed.length > 0)
    deps.out(
      `Not failed, left as ${notFailed.length === 1 ? 'it is' : 'they are'}: ${notFailed.map((id) => `${id} (${states.get(id)})`).join(', ')}`,
    );
  // A typo must not pass for success in a script; ids that were simply not failed may.
  return count === 0 && unknown.length > 0 ? 1 : 0;
}

async function tellStory(
  djbh: string,
  story: NonNullable<AnnouncementsDeps['story']>,
  out: (line: string) => void,
): Promise<number> {
  const told = await story(djbh);
  if (!told) {
    out(
      `No approval ${djbh} here: never started by this app, or purged by retention (numbers are case-sensitive).`,
    );
    return 1;
  }
  for (const line of storyLines(told)) out(line);
  return 0;
}

const at = (date: Date | null | undefined) => (date ? date.toISOString() : '-');

/**
 * Text someone typed (a title, a template's name) or another system wrote (an error), as one line
 * of the terminal: control characters (line breaks, tabs, escape sequences) and the Unicode line
 * and paragraph separators and direction overrides are written as escapes, so a title with line
 * breaks cannot forge lines of the story, nor a tab its columns.
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, (c) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[c] ?? `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`;
  });
}

/**
 * An approval's story for a person: its facts (who asked whom, when, what was decided, reminders,
 * escalation, checks), then its announcements in recorded order with their state, attempts and
 * times, so that "was my decision posted?" has an answer without reading logs.
 */
export function storyLines({ approval, schedule, announcements }: ApprovalStory): string[] {
  const a = printableApproval(approval);
  const { request, parties, outcome, followUp, slack } = a;
  const { approver } = parties;
  const template = request.template?.name ? `, template "${request.template.name}"` : '';
  const again = request.againOf ? `, again after ${request.againOf.djbh}` : '';
  const lines = [
    `Approval ${a.djbh}: ${request.title}`,
    `  requested\t${at(request.createdAt)} by ${parties.requester.login} (${parties.requester.slackId}) in ${slack.channelId}${template}${again}`,
    `  approver\t${approver.login}${approver.slackId ? ` (${approver.slackId})` : ' (not on Slack)'}${approver.unreachableSince ? `, unreachable on Slack since ${at(approver.unreachableSince)}` : ''}${approver.since ? `, since ${at(approver.since)}; before: ${parties.formerApprovers.map((p) => p.login).join(', ')}` : ''}`,
    `  decision\t${outcome.decision}${outcome.decidedBy ? ` by ${outcome.decidedBy}` : ''}`,
    `  following\t${outcome.tracking}; last checked ${at(schedule.lastCheckedAt)}, next check ${outcome.tracking === 'active' ? at(schedule.nextCheckAt) : '-'}${schedule.checkFailures > 0 ? `, ${schedule.checkFailures} failed check(s) in a row` : ''}${outcome.unknownSince ? `, unknown to the service since ${at(outcome.unknownSince)}` : ''}`,
    `  reminders\t${followUp.remindersSent}${followUp.lastRemindedAt ? `, last ${at(followUp.lastRemindedAt)}` : ''}`,
    `  escalated\t${followUp.escalatedAt ? `${at(followUp.escalatedAt)} ${followUp.escalatedTo ? `to ${followUp.escalatedTo.login} (${followUp.escalatedTo.chatId})` : 'to nobody (nobody above the approver could be told)'}` : 'no'}`,
    `  request message\t${slack.messageTs ? `${slack.channelId} ${slack.messageTs}${slack.threadTs ? ` in thread ${slack.threadTs}` : ''}` : 'not posted yet'}`,
    `${announcements.length} announcement${announcements.length === 1 ? '' : 's'} (recorded, id, state, attempts, last attempt, where or why):`,
  ];
  for (const n of announcements) {
    const where =
      n.state === 'sent'
        ? n.sentTs
          ? `${n.sentChannel} ${n.sentTs}`
          : 'nothing to post'
        : n.state === 'pending'
          ? `next attempt ${at(n.nextAttemptAt)}${n.lastError ? `; last error: ${printable(n.lastError)}` : ''}`
          : printable(n.lastError ?? '');
    lines.push(
      `  ${at(n.createdAt)}\t${n.id}\t${n.state}\t${n.attempts} attempt(s)\t${at(n.attemptedAt)}\t${where}`,
    );
  }
  return lines;
}

/** The approval with every text a person or the service chose made printable (see printable). */
function printableApproval(a: ApprovalStory['approval']): ApprovalStory['approval'] {
  const { request, parties, outcome, followUp } = a;
  const orNull = (text: string | null) => (text === null ? null : printable(text));
  return {
    ...a,
    request: {
      ...request,
      title: printable(request.title),
      template: request.template && { ...request.template, name: printable(request.template.name) },
    },
    parties: {
      ...parties,
      requester: { ...parties.requester, login: printable(parties.requester.login) },
      approver: { ...parties.approver, login: printable(parties.approver.login) },
      formerApprovers: parties.formerApprovers.map((p) => ({ ...p, login: orNull(p.login) })),
    },
    outcome: { ...outcome, decidedBy: orNull(outcome.decidedBy) },
    followUp: {
      ...followUp,
      escalatedTo: followUp.escalatedTo && {
        ...followUp.escalatedTo,
        login: printable(followUp.escalatedTo.login),
      },
    },
  };
}
