import { describe, expect, it } from 'vitest';
import { createMetrics, type MetricsSource, TEMPLATE_SERIES } from '../src/metrics.ts';

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

describe('approvals started, by template', () => {
  it('keeps the template label bounded: past TEMPLATE_SERIES distinct ids, the rest count as other', async () => {
    const metrics = createMetrics(source(), { ...live, deliverySinceProgressMs: () => 0 });
    // Members may add (and remove, and add again) templates in any channel: each a new id.
    for (let i = 0; i < TEMPLATE_SERIES + 50; i++) metrics.approvalStarted('form', `tpl-${i}`);
    metrics.approvalStarted('form', 'tpl-0');
    const text = await metrics.registry.metrics();
    const series = text
      .split('\n')
      .filter((l) => l.startsWith('slack_approvals_approvals_started_total{'));
    const templates = new Set(series.map((l) => /template="([^"]*)"/.exec(l)?.[1]));
    expect(templates.size).toBeLessThanOrEqual(TEMPLATE_SERIES + 2);
    expect(
      lineOf(text, 'slack_approvals_approvals_started_total{entry_point="form",template="tpl-0"}'),
    ).toMatch(/ 2$/);
    expect(text).toContain(
      'slack_approvals_approvals_started_total{entry_point="form",template="other"} 50',
    );
  });
});
