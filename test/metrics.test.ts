import { describe, expect, it } from 'vitest';
import { createMetrics, type MetricsSource } from '../src/metrics.ts';

/** A database that answers, then rejects every read, then never answers. */
function source(): MetricsSource & { mode: 'ok' | 'down' | 'hung' } {
  const read =
    <T>(value: T) =>
    (): Promise<T> => {
      if (state.mode === 'down') return Promise.reject(new Error('connection terminated'));
      if (state.mode === 'hung') return new Promise<T>(() => {});
      return Promise.resolve(value);
    };
  const state = {
    mode: 'ok' as 'ok' | 'down' | 'hung',
    announcementCounts: read([{ state: 'pending', kind: 'decision', count: 3 }]),
    dueCount: read(7),
    oldestPendingAnnouncement: read<Date | undefined>(undefined),
    oldestOverdueCheck: read<Date | undefined>(undefined),
    deliveryPaused: read(false),
  };
  return state;
}

const live = { serviceUp: () => true, pool: () => ({ total: 2, idle: 1, waiting: 0 }) };
const lineOf = (text: string, name: string) =>
  text.split('\n').find((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));

describe('/metrics while the database is away', () => {
  it('still answers, with the database gauges at their last values and database_answered 0', async () => {
    const db = source();
    const stalled = { ms: 0 };
    const metrics = createMetrics(db, { ...live, deliverySinceProgressMs: () => stalled.ms });
    const first = await metrics.registry.metrics();
    expect(lineOf(first, 'slack_approvals_due_backlog')).toBe('slack_approvals_due_backlog 7');
    expect(lineOf(first, 'slack_approvals_metrics_database_answered')).toContain(' 1');
    for (const mode of ['down', 'hung'] as const) {
      db.mode = mode;
      stalled.ms = 90_000;
      const started = Date.now();
      const text = await metrics.registry.metrics();
      // Within Prometheus's 10 s scrape timeout, a hung database or not.
      expect(Date.now() - started).toBeLessThan(8000);
      expect(lineOf(text, 'slack_approvals_due_backlog')).toBe('slack_approvals_due_backlog 7');
      expect(lineOf(text, 'slack_approvals_announcements')).toContain('} 3');
      expect(lineOf(text, 'slack_approvals_delivery_stalled_seconds')).toBe(
        'slack_approvals_delivery_stalled_seconds 90',
      );
      expect(lineOf(text, 'slack_approvals_metrics_database_answered')).toContain(' 0');
    }
  });
});
