import type { ApprovalStore } from '../approvals/approval-store.ts';

const USAGE = `Usage:
  npm run announcements -- failed            list announcements that failed for good
  npm run announcements -- redrive <id>…     make these failed announcements pending again
  npm run announcements -- redrive --all     make every failed announcement pending again`;

/**
 * The operator's view of the outbox: what failed for good and why, and re-driving it once the
 * cause is fixed (the app delivers re-driven announcements within a second or so, with the usual
 * check for an earlier post first). Returns the process exit code.
 */
export async function announcementsCommand(
  args: string[],
  deps: { store: ApprovalStore; now: () => Date; out: (line: string) => void },
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
    const count = await deps.store.redriveAnnouncements(deps.now(), all ? undefined : ids);
    deps.out(`${count} announcement${count === 1 ? '' : 's'} pending again`);
    return 0;
  }
  deps.out(USAGE);
  return 2;
}
