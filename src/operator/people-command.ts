import {
  erasePerson,
  exportPerson,
  type PersonalData,
  pseudonymOf,
} from '../approvals/personal-data.ts';

export const PEOPLE_USAGE = `Usage:
  npm run people -- export <login or Slack member ID>
      everything the app holds about one person, as JSON on stdout: their account link, the
      approvals they asked for, decided, had or were escalated to (titles and notes included),
      what was sent to their DM, workflow confirmations, templates naming them and the changes
      they made to templates
  npm run people -- erase <login or Slack member ID>
      removes them: their link and workflow confirmations are deleted, and in every approval that
      ended, template and template change they are replaced by one pseudonym (erased-…) made for
      this erase, with the title and note of the approvals they asked for blanked; what stays for
      the audit trail is in docs/security.md. Approvals still open are left and named (exit 1):
      run erase again once they ended.
A Slack member ID starts with U or W; anything else is a login (compared without case). Their
other name is found in their link and in the approvals that recorded both. It reads DATABASE_URL
(from the environment or .env, else ./data/approvals.db), as the app does, and never creates or
migrates a database. In the image: the same command, or node dist/operator/people-cli.js <arguments>.`;

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export function isPeopleWork(args: readonly string[]): boolean {
  const [verb, who, ...rest] = args;
  return (verb === 'export' || verb === 'erase') && Boolean(who?.trim()) && rest.length === 0;
}

export interface PeopleDeps {
  data: PersonalData;
  /** A random token for the erase's pseudonym. */
  token: () => string;
  out: (line: string) => void;
}

/** Runs `npm run people -- …`. Returns the process exit code. */
export async function peopleCommand(args: readonly string[], deps: PeopleDeps): Promise<number> {
  const [verb, who = ''] = args;
  if (verb === 'export') {
    const { keys, sections } = await exportPerson(deps.data, who);
    deps.out(JSON.stringify({ person: keys, ...sections }, null, 2));
    return 0;
  }
  if (verb === 'erase') {
    const pseudonym = pseudonymOf(deps.token());
    const outcome = await erasePerson(deps.data, who, pseudonym);
    const total = Object.values(outcome.changed).reduce((a, b) => a + b, 0);
    deps.out(
      `${who}: ${total === 0 ? 'nothing erased' : `erased as ${pseudonym}`} (${[...outcome.keys.slackIds, ...outcome.keys.logins].join(', ')})`,
    );
    for (const [section, n] of Object.entries(outcome.changed)) deps.out(`  ${section}: ${n}`);
    if (outcome.openApprovals.length > 0)
      deps.out(
        `Still open, left as they are: ${outcome.openApprovals.join(', ')}. Run erase again once they ended.`,
      );
    if (outcome.busyLanes > 0)
      deps.out(
        `${outcome.busyLanes} delivery lane(s) of theirs in use now: run erase again in a minute.`,
      );
    return outcome.openApprovals.length > 0 || outcome.busyLanes > 0 ? 1 : 0;
  }
  deps.out(PEOPLE_USAGE);
  return 2;
}
