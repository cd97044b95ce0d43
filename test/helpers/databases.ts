import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /** Why this dialect cannot run here; the suite is then skipped and says so. */
  skipReason?: string;
  /** A fresh, empty database URL for this test file. */
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

const postgresUrl = process.env.TEST_POSTGRES_URL;

/** The URL a local Postgres usually answers on, as docs/developing.md and .ci/run use it. */
export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Why the Postgres suites cannot run, or undefined when they can: always with the command that
 * turns them on, and saying so when a Postgres is already listening on 127.0.0.1:5432.
 */
export function postgresSkipReason(
  url: string | undefined,
  localPostgresListening: boolean,
): string | undefined {
  if (url) return undefined;
  const run = `TEST_POSTGRES_URL=${LOCAL_POSTGRES_URL} npm test`;
  return localPostgresListening
    ? `TEST_POSTGRES_URL is not set, though a Postgres is listening on 127.0.0.1:5432; to run them: ${run}`
    : `TEST_POSTGRES_URL is not set; to run them, start Postgres and run ${run} (.ci/run does both)`;
}

/** Whether something accepts connections on 127.0.0.1:5432, asked once, for at most 300 ms. */
function localPostgresListening(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 5432 });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(300, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const postgresSkip = postgresUrl
  ? undefined
  : postgresSkipReason(undefined, await localPostgresListening());

/** Every dialect the store supports; one suite runs against each. */
export const TEST_DATABASES: TestDatabase[] = [
  {
    name: 'sqlite',
    async create() {
      const dir = mkdtempSync(join(tmpdir(), 'slack-approvals-'));
      return {
        url: join(dir, 'nested', 'approvals.db'),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'postgres',
    ...(postgresSkip ? { skipReason: postgresSkip } : {}),
    async create() {
      if (!postgresUrl) throw new Error('TEST_POSTGRES_URL is not set');
      // A database of its own per test file, so files can run in parallel.
      const name = `sa_test_${randomBytes(6).toString('hex')}`;
      await adminQuery(postgresUrl, `CREATE DATABASE ${name}`);
      const url = new URL(postgresUrl);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        drop: () => adminQuery(postgresUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      };
    },
  },
];

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Opens a migrated database of the given dialect and empties its tables between tests. */
export async function openTestDatabase(which: TestDatabase): Promise<{
  handle: DatabaseHandle;
  url: string;
  clear(): Promise<void>;
  close(): Promise<void>;
}> {
  const { url, drop } = await which.create();
  const handle = await openDatabase(url);
  return {
    handle,
    url,
    async clear() {
      await handle.db.deleteFrom('submission_keys').execute();
      await handle.db.deleteFrom('step_confirmations').execute();
      await handle.db.deleteFrom('lane_leases').execute();
      await handle.db.deleteFrom('delivery_state').execute();
      await handle.db.deleteFrom('announcements').execute();
      await handle.db.deleteFrom('linked_accounts').execute();
      await handle.db.deleteFrom('tracked_approvals').execute();
      await handle.db.deleteFrom('job_runs').execute();
      await handle.db.deleteFrom('template_changes').execute();
      await handle.db.deleteFrom('request_templates').execute();
      await handle.db.deleteFrom('delegations').execute();
      await handle.db.deleteFrom('approval_chain_steps').execute();
      await handle.db.deleteFrom('approval_chains').execute();
    },
    async close() {
      await handle.close();
      await drop();
    },
  };
}
