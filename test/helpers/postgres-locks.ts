import pg from 'pg';

/**
 * Two more sessions on a Postgres database, as another replica would have: `holder` takes locks
 * in its own transaction, `watcher` sees who waits for them (lockWaiters). Both are closed after
 * `body`, whatever it did.
 */
export async function withHolderAndWatcher<T>(
  url: string,
  body: (holder: pg.Client, watcher: pg.Client) => Promise<T>,
): Promise<T> {
  const holder = new pg.Client({ connectionString: url });
  const watcher = new pg.Client({ connectionString: url });
  await holder.connect();
  await watcher.connect();
  try {
    return await body(holder, watcher);
  } finally {
    await holder.end();
    await watcher.end();
  }
}

/**
 * Resolves once `count` other sessions wait for a lock, or `gaveUp` says to stop. Asked outside
 * any transaction: inside one, its snapshot of the activity would not move.
 */
export async function lockWaiters(
  watcher: pg.Client,
  count: number,
  gaveUp: () => boolean = () => false,
): Promise<void> {
  while (!gaveUp()) {
    const { rows } = await watcher.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.n ?? 0) >= count) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
