import type { Kysely } from 'kysely';
import type { ApprovalRepository } from '../approvals/approval-repository.ts';
import type { DeliveryPause } from '../approvals/delivery-pause.ts';
import type { Outbox } from '../approvals/outbox.ts';
import { createApprovalRepository } from './approval-repository.ts';
import type { DialectName } from './database.ts';
import { createDeliveryPauseStore } from './delivery-pause-store.ts';
import { createOutbox } from './outbox-store.ts';
import type { Database } from './schema.ts';

/** The approvals, their outbox and the fleet-wide pause, over one database. */
export type ApprovalStores = ApprovalRepository & Outbox & DeliveryPause;

/**
 * The three stores the approvals' flow uses, as one object: for the composition root and for
 * tests that drive a whole flow. Each consumer takes only the port it needs.
 */
export function createApprovalStores(db: Kysely<Database>, dialect: DialectName): ApprovalStores {
  return {
    ...createApprovalRepository(db, dialect),
    ...createOutbox(db, dialect),
    ...createDeliveryPauseStore(db, dialect),
  };
}
