import { type Expression, type ExpressionBuilder, sql } from 'kysely';
import type { DialectName } from './database.ts';
import type { Database } from './schema.ts';

/** A duration as the whole, non-negative milliseconds both dialects bind as an integer. */
export function wholeMs(ms: number): number {
  return Math.max(0, Math.round(ms));
}

/**
 * The database's clock in epoch milliseconds. Leases are measured on it, never on a replica's own
 * clock: replicas whose clocks disagree by minutes still agree on who holds what.
 */
export function dbNowMs(dialect: DialectName) {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}

/** Whether the row's lease (`lease_until`, on the database's clock) is free: never taken, or run out. */
export function leaseIsFree<T extends 'announcements' | 'tracked_approvals'>(
  eb: ExpressionBuilder<Database, T>,
  dialect: DialectName,
) {
  const lease = eb.ref('lease_until' as never) as unknown as Expression<number | null>;
  return eb.or([eb(lease, 'is', null), eb(lease, '<', dbNowMs(dialect))]);
}
