import type { Outbox } from '../approvals/outbox.ts';

export const ANNOUNCEMENTS_USAGE = `Usage:
  npm run announcements -- failed            list announcements that failed for good
  npm run announcements -- redrive <id>…     make these failed announcements pending again
                                             (exits 1 when none was, because an id is unknown)
  npm run announcements -- redrive --all     make every failed announcement pending again
It reads DATABASE_URL (from the environment or .env, else ./data/approvals.db), as the app does,
and never creates or migrates a database. In the image: the same command, or
node dist/operator/cli.js <arguments>.`;

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export const isAnnouncementsWork = (args: readonly string[]): boolean =>
  args[0] === 'failed' || (args[0] === 'redrive' && args.length > 1);

/**
 * The operator's view of the outbox: what failed for good and why, and re-driving it once the
 * cause is fixed (the app delivers re-driven announcements within a second or so, with the usual
 * check for an earlier post first). Returns the process exit code.
 */
export async function announcementsCommand(
  args: string[],
  deps: {
    store: Pick<Outbox, 'failedAnnouncements' | 'redriveAnnouncements'>;
    /** The state of each named announcement that exists (see store/announcement-states.ts). */
    states: (ids: readonly string[]) => Promise<Map<string, string>>;
    now: () => Date;
    out: (line: string) => void;
  },
): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'failed') {
    const failed = await deps.store.failedAnnouncements(1000);
    deps.out(`${failed.length} failed announcement${failed.length === 1 ? '' : 's'}`);
    for (const a of failed) {
      deps.out(
        `${a.id}\t${a.createdAt.toISOString()}\t${a.attempts} attempt(s)\t${a.lastError ?? ''}`,
      );
    }
    return 0;
  }
  if (verb === 'redrive' && rest.length > 0) {
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
  deps.out(ANNOUNCEMENTS_USAGE);
  return 2;
}
