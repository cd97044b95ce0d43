import type { Config } from '../config.ts';
import { describe } from '../errors.ts';
import { startLogContext } from '../log-context.ts';
import type { Logger } from '../logger.ts';
import { createAccountLinkStore } from '../store/account-link-store.ts';
import { createApprovalStores } from '../store/approval-stores.ts';
import { createChainStore } from '../store/chain-store.ts';
import { type DatabaseHandle, openDatabase } from '../store/database.ts';
import { createDelegationStore } from '../store/delegation-store.ts';
import { createReminderPosts } from '../store/reminder-post-store.ts';
import { type ReportRange, streamApprovalRecords } from '../store/report-store.ts';
import { createRetentionStore } from '../store/retention-store.ts';
import { createStepConfirmationStore } from '../store/step-confirmation-store.ts';
import { createSubmissionGuard } from '../store/submission-guard-store.ts';
import { createTemplateStore } from '../store/template-store.ts';

/** Opens (and migrates) the database DATABASE_URL names, saying what it found. */
export async function openAppDatabase(config: Config, logger: Logger): Promise<DatabaseHandle> {
  const database = await openDatabase(config.databaseUrl, {
    poolSize: config.databasePool.size,
    statementTimeoutMs: config.databasePool.statementTimeoutMs,
    // A pooled connection may have been opened while some request was handled: its error is
    // nobody's request, so it is logged in a context of its own.
    onConnectionError: (error) =>
      startLogContext({}, () =>
        logger.warn({ error: describe(error) }, 'database connection lost; it will reconnect'),
      ),
    onPreparedStatementsOff: (code) =>
      startLogContext({}, () =>
        logger.warn(
          { sqlstate: code },
          'a pooler in front of Postgres moves sessions between server connections: statements are no longer prepared (a create takes a few hundred µs more); PgBouncer 1.21+ with max_prepared_statements keeps them',
        ),
      ),
  });
  logger.info({ dialect: database.dialect, location: database.location }, 'database ready');
  if (database.schemaAhead.length > 0)
    logger.warn(
      { migrations: database.schemaAhead },
      'the database was migrated by a newer release (a rollback?); running on it unchanged',
    );
  return database;
}

/** Every store over the one database, each behind the port its consumers use. */
export function createStores(database: DatabaseHandle) {
  const { db, dialect } = database;
  return {
    /** The approvals, their outbox and the fleet-wide pause. */
    approvals: createApprovalStores(db, dialect),
    templates: createTemplateStore(db, dialect),
    links: createAccountLinkStore(db, dialect),
    confirmations: createStepConfirmationStore(db),
    submissions: createSubmissionGuard(db),
    retention: createRetentionStore(db, dialect),
    reminderPosts: createReminderPosts(db),
    delegations: createDelegationStore(db),
    /** Requests in several steps (approvals/steps.ts). */
    chains: createChainStore(db, dialect),
    /** Approvals a page at a time, for reports (`/approve report`). */
    reports: (range: ReportRange) => streamApprovalRecords(db, range),
  };
}

export type Stores = ReturnType<typeof createStores>;
