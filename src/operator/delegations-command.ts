import { type Delegations, inForce } from '../approvals/delegation.ts';

export const DELEGATIONS_USAGE = `Usage:
  npm run delegations -- list                 every delegate while away on record: who, to whom,
                                              until when, and whether it still applies
  npm run delegations -- clear <login>…       remove a person's delegation: their new requests go
                                              to them again at once (exits 1 when none was)
People set (and clear) their own delegate on the app's Home tab; this is for an admin, say when
someone left with a delegation still in force. A delegation changes only who NEW requests are
suggested for or sent to; approvals already waiting stay with their approver in the service. An
ended one is deleted by the retention job 30 days after it ended. It reads DATABASE_URL (from the
environment or .env, else ./data/approvals.db), as the app does, and never creates or migrates a
database. In the image: the same command, or node dist/operator/delegations-cli.js <arguments>.`;

/** Whether the arguments name work on the database (else the usage is the whole answer). */
export function isDelegationsWork(args: readonly string[]): boolean {
  const [verb, ...rest] = args;
  if (verb === 'list') return rest.length === 0;
  if (verb === 'clear') return rest.length >= 1;
  return false;
}

export interface DelegationsDeps {
  delegations: Pick<Delegations, 'list' | 'clear'>;
  now: () => Date;
  out: (line: string) => void;
}

/** Runs `list` or `clear`; returns the exit code. */
export async function delegationsCommand(
  args: readonly string[],
  deps: DelegationsDeps,
): Promise<number> {
  const [verb, ...logins] = args;
  if (verb === 'list') {
    const all = await deps.delegations.list();
    deps.out(`${all.length} delegation${all.length === 1 ? '' : 's'}`);
    const now = deps.now();
    for (const d of all)
      deps.out(
        `${d.from}\t→ ${d.to}\tuntil ${d.until.toISOString()}\t${inForce(d, now) ? 'in force' : 'ended'}\tset ${d.setAt.toISOString()}`,
      );
    return 0;
  }
  const unknown: string[] = [];
  for (const login of logins) {
    if (await deps.delegations.clear(login)) deps.out(`Cleared: ${login}`);
    else unknown.push(login);
  }
  if (unknown.length > 0)
    deps.out(`No delegation, nothing to clear: ${unknown.join(', ')} (\`list\` shows them)`);
  return unknown.length > 0 ? 1 : 0;
}
