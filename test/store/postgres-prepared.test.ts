import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalRepository } from '../../src/store/approval-repository.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { approval, T0 } from '../helpers/store-fixtures.ts';

// Starting an approval on Postgres is one statement kept prepared on each connection
// (postgres-prepared.ts). What a prepared statement can meet in production: a pooler that moves
// the session (the statement is gone on the server the next time), and a later release's
// migration adding a column while it is prepared.
const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
if (!postgres) throw new Error('no Postgres entry in TEST_DATABASES');

describe.skipIf(postgres.skipReason)(
  `prepared statements on Postgres${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let created: Awaited<ReturnType<typeof postgres.create>>;
    let handle: DatabaseHandle;
    // One connection, so what the statements below see is the connection the approvals used.
    beforeAll(async () => {
      created = await postgres.create();
      handle = await openDatabase(created.url, { poolSize: 1 });
    });
    afterAll(async () => {
      await handle?.close();
      await created?.drop();
    });
    /** The statements prepared on the (one) connection of `db`. */
    const prepared = async (db = handle.db) =>
      (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db)).rows.map(
        (r) => r.name,
      );
    const stored = async () =>
      (
        await handle.db
          .selectFrom('announcements')
          .select(['djbh', 'seq'])
          .orderBy('djbh')
          .orderBy('seq')
          .execute()
      ).map((r) => `${r.djbh} ${r.seq}`);
    /** `djbh`'s announcements as stored: its number and each one's place. */
    const storedOf = async (djbh: string) => (await stored()).filter((r) => r.startsWith(djbh));

    it('prepares the approval-and-announcements statement once, and runs it again as prepared', async () => {
      const repository = createApprovalRepository(handle.db, 'postgres');
      await repository.createApproval(approval('PREP0000001a'), T0);
      const names = await prepared();
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(/^sa_[0-9a-f]{24}$/);
      await repository.createApproval(approval('PREP0000002a'), T0);
      expect(await prepared()).toEqual(names);
      expect(await stored()).toEqual([
        'PREP0000001a 1',
        'PREP0000001a 2',
        'PREP0000002a 1',
        'PREP0000002a 2',
      ]);
    });

    it('runs a statement the server no longer knows again unnamed, stores it once, and prepares nothing more', async () => {
      const repository = createApprovalRepository(handle.db, 'postgres');
      await repository.createApproval(approval('PREP0000003a'), T0);
      // As a pooler handing the session another server connection: the driver still thinks it
      // prepared the statement, the server has never seen it.
      await sql`deallocate all`.execute(handle.db);
      await repository.createApproval(approval('PREP0000004a'), T0);
      await repository.createApproval(approval('PREP0000005a'), T0);
      expect(await prepared()).toEqual([]);
      expect(await storedOf('PREP0000004a')).toEqual(['PREP0000004a 1', 'PREP0000004a 2']);
      expect(await storedOf('PREP0000005a')).toHaveLength(2);
    });

    it('runs a statement the server already has under its name again unnamed (as after a pooler handed over a session)', async () => {
      // The statement's name, as a process that prepared it knows it.
      const one = await openDatabase(created.url, { poolSize: 1 });
      await createApprovalRepository(one.db, 'postgres').createApproval(
        approval('PREP0000007b'),
        T0,
      );
      const [name] = await prepared(one.db);
      await one.close();
      expect(name).toMatch(/^sa_/);
      const stopped: string[] = [];
      const other = await openDatabase(created.url, {
        poolSize: 1,
        onPreparedStatementsOff: (code) => stopped.push(code),
      });
      try {
        // Another connection's statement under the same name, as a pooler's server connection
        // keeps it for whichever client comes next: the driver does not know it is there.
        await sql.raw(`prepare "${name}" as select 1`).execute(other.db);
        await createApprovalRepository(other.db, 'postgres').createApproval(
          approval('PREP0000008a'),
          T0,
        );
        await createApprovalRepository(other.db, 'postgres').createApproval(
          approval('PREP0000009a'),
          T0,
        );
        const names = await sql<{ name: string; statement: string }>`
          select name, statement from pg_prepared_statements`.execute(other.db);
        expect(names.rows).toEqual([{ name, statement: `prepare "${name}" as select 1` }]);
        // Said once (the app logs it), however many creates follow.
        expect(stopped).toEqual(['42P05']);
      } finally {
        await other.close();
      }
      expect(await storedOf('PREP0000008a')).toEqual(['PREP0000008a 1', 'PREP0000008a 2']);
      expect(await storedOf('PREP0000009a')).toHaveLength(2);
    });

    it('never prepares inside a transaction (request again): a failed prepare there could not run again', async () => {
      const fresh = await openDatabase(created.url, { poolSize: 1 });
      try {
        const repository = createApprovalRepository(fresh.db, 'postgres');
        await repository.createApproval(approval('PREP0000010a'), T0);
        // The driver believes the statement prepared; the server has forgotten it.
        await sql`deallocate all`.execute(fresh.db);
        await repository.createApproval(
          approval('PREP0000011a', { request: { againOf: { djbh: 'PREP0000010a', link: null } } }),
          T0,
        );
        const again = await fresh.db
          .selectFrom('tracked_approvals')
          .select('requested_again_as')
          .where('djbh', '=', 'PREP0000010a')
          .executeTakeFirstOrThrow();
        expect(again.requested_again_as).toBe('PREP0000011a');
      } finally {
        await fresh.close();
      }
    });

    it('goes on after a later release adds a column to the tables it writes', async () => {
      const fresh = await openDatabase(created.url, { poolSize: 1 });
      try {
        const repository = createApprovalRepository(fresh.db, 'postgres');
        await repository.createApproval(approval('PREP0000006a'), T0);
        await sql`alter table tracked_approvals add column later_release text`.execute(fresh.db);
        await sql`alter table announcements add column later_release text`.execute(fresh.db);
        await repository.createApproval(approval('PREP0000007a'), T0);
        expect(await storedOf('PREP0000007a')).toHaveLength(2);
      } finally {
        await fresh.close();
      }
    });
  },
);

// A pooler in transaction mode (PgBouncer before 1.21) hands each transaction whichever server
// connection is free: a named statement is missing there, or already there from another client.
const pgbouncer = spawnSync('sh', ['-c', 'command -v pgbouncer']).stdout.toString().trim();
const pgbouncerSkip = postgres.skipReason
  ? postgres.skipReason
  : pgbouncer
    ? undefined
    : 'pgbouncer is not installed (.ci/run installs it)';

describe.skipIf(pgbouncerSkip)(
  `prepared statements through PgBouncer in transaction mode${pgbouncerSkip ? ` (skipped: ${pgbouncerSkip})` : ''}`,
  () => {
    it('starts every approval of two replicas, each with its announcements numbered', async () => {
      const created = await postgres.create();
      const direct = await openDatabase(created.url);
      await direct.close();
      const bouncer = await startPgbouncer();
      const url = new URL(created.url);
      url.port = String(bouncer.port);
      const first = await openDatabase(url.toString(), { poolSize: 4, statementTimeoutMs: 0 });
      const replicas = [
        first,
        await openDatabase(url.toString(), { poolSize: 4, statementTimeoutMs: 0 }),
      ];
      try {
        let n = 0;
        const failures: string[] = [];
        for (let round = 0; round < 10; round++)
          await Promise.all(
            replicas.flatMap((replica) =>
              Array.from({ length: 4 }, async () => {
                const djbh = `PGB${String(n++).padStart(8, '0')}a`;
                await createApprovalRepository(replica.db, 'postgres')
                  .createApproval(approval(djbh), T0)
                  .catch((error: { code?: string; message?: string }) =>
                    failures.push(`${djbh}: ${error.code} ${error.message}`),
                  );
              }),
            ),
          );
        expect(failures).toEqual([]);
        const numbered = await first.db
          .selectFrom('announcements')
          .select(({ fn }) => [fn.count<number>('djbh').as('n'), fn.max('seq').as('top')])
          .executeTakeFirstOrThrow();
        expect(Number(numbered.n)).toBe(160);
        expect(Number(numbered.top)).toBe(2);
      } finally {
        for (const replica of replicas) await replica.close();
        bouncer.stop();
        await created.drop();
      }
    }, 240_000);
  },
);

/** PgBouncer in transaction mode in front of the test Postgres, on a free port. */
async function startPgbouncer(): Promise<{ port: number; stop(): void }> {
  const target = new URL(process.env.TEST_POSTGRES_URL ?? '');
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const user = decodeURIComponent(target.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 3',
      'ignore_startup_parameters = extra_float_digits,statement_timeout',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root; as root (CI), it runs as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownPostgres(join(dir, file));
  const child = spawn(
    pgbouncer,
    [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let said = '';
  child.stderr.on('data', (chunk) => {
    said += chunk;
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    }).catch(() => false);
    if (listening) break;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`PgBouncer did not start: ${said}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    stop: () => {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function chownPostgres(path: string): void {
  const id = spawnSync('id', ['-u', 'postgres']).stdout.toString().trim();
  const group = spawnSync('id', ['-g', 'postgres']).stdout.toString().trim();
  if (id && group) chownSync(path, Number(id), Number(group));
}
