import type { Delegations } from '../approvals/delegation.ts';

/** Who is away in the sandbox with a delegate: Wang Fang (Network), whose new requests go to Maria. */
export const SANDBOX_DELEGATION = {
  from: 'wang.fang@corp.example',
  to: 'maria.lopez@corp.example',
  days: 7,
} as const;

/**
 * A person with a delegate while away, so it can be watched without a workspace: Wang Fang's Home
 * says who gets her new requests until when, and Zhao Min (who reports to her) is offered Maria
 * in the form, with the reason. Set only when she has none on record: on a database kept across
 * restarts, what someone cleared or changed stays so.
 */
export async function seedDelegations(delegations: Delegations, now = new Date()): Promise<void> {
  const { from, to, days } = SANDBOX_DELEGATION;
  if (await delegations.of(from)) return;
  await delegations.set({
    from,
    to,
    until: new Date(now.getTime() + days * 86_400_000),
    setAt: now,
  });
}
