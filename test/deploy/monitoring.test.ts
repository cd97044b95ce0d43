import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { harnessPerTest } from '../helpers/harness.ts';

// The alert rules and the dashboard in deploy/ use only metrics the app exports, and the rules
// pass Prometheus's own checker and their unit tests.

const deploy = new URL('../../deploy/', import.meta.url).pathname;
const exec = promisify(execFile);
const harness = harnessPerTest();
const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();

interface Rules {
  groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
}
interface Dashboard {
  panels: Array<{
    id: number;
    title: string;
    gridPos: { h: number; w: number; x: number; y: number };
    targets: Array<{ expr: string }>;
  }>;
}

const rules = parse(readFileSync(join(deploy, 'prometheus/alerts.yml'), 'utf8')) as Rules;
const dashboard = JSON.parse(
  readFileSync(join(deploy, 'grafana/slack-approvals.json'), 'utf8'),
) as Dashboard;

const expressions = [
  ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
  ...dashboard.panels.flatMap((p) =>
    p.targets.map((t) => ({ where: `panel ${p.title}`, expr: t.expr })),
  ),
];

// Prometheus's own series, not the app's.
const PROMETHEUS_OWN = new Set(['up']);
const metricNames = (expr: string) =>
  [...expr.matchAll(/\b(slack_approvals_\w+|nodejs_\w+|process_\w+|up)\b(?!\s*\()/g)].map(
    (m) => m[1] as string,
  );

describe('deploy/ monitoring', () => {
  it('names only metrics a running app exports, in every alert and dashboard panel', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    const text = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    const exported = new Map(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    const known = (name: string) => {
      if (exported.has(name) || PROMETHEUS_OWN.has(name)) return true;
      const base = name.replace(/_(bucket|sum|count)$/, '');
      return base !== name && exported.get(base) === 'histogram';
    };
    expect(expressions.length).toBeGreaterThan(10);
    // A counter alerted on with increase() exists at 0 from the start, for every kind: its
    // first failure after a restart must count.
    expect(text).toContain('slack_approvals_announcements_failed_total{kind="decision"} 0');
    expect(text).toContain('slack_approvals_announcements_failed_total{kind="step-complete"} 0');
    for (const { where, expr } of expressions) {
      const names = metricNames(expr);
      expect(names.length, `${where} names no metric: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(known(name), `${where} uses ${name}`).toBe(true);
    }
  });

  it('is a dashboard Grafana can lay out: unique ids, panels within 24 columns and never on top of each other', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    for (const p of dashboard.panels) {
      const { h, w, x, y } = p.gridPos;
      expect(x + w, p.title).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++)
        for (let column = x; column < x + w; column++) {
          const cell = `${row},${column}`;
          expect(cells.get(cell), `${p.title} overlaps`).toBeUndefined();
          cells.set(cell, p.title);
        }
    }
  });

  it('shows what approvals do: started, decided, time to decision, seen to reply, open by age', () => {
    const shown = expressions.filter((e) => e.where.startsWith('panel')).map((e) => e.expr);
    for (const metric of [
      'slack_approvals_approvals_started_total',
      'slack_approvals_approvals_decided_total',
      'slack_approvals_time_to_decision_working_hours_bucket',
      'slack_approvals_decision_reply_seconds_bucket',
      'slack_approvals_open_approvals',
    ])
      expect(
        shown.some((expr) => metricNames(expr).includes(metric)),
        metric,
      ).toBe(true);
  });

  it('never selects by a scrape job’s name, which differs between compose and Kubernetes', () => {
    // compose's job is slack-approvals; Kubernetes' pod annotations scrape under kubernetes-pods,
    // a PodMonitor under its own: a rule tied to one job fires nowhere else.
    for (const { where, expr } of expressions)
      expect(expr, where).not.toMatch(/\bjob\s*(=|!=|=~|!~)/);
  });

  it.skipIf(!promtool && !process.env.CI)(
    `passes promtool check rules and its rule tests${promtool ? '' : ' (skipped: no promtool; Debian package prometheus)'}`,
    async () => {
      // CI installs it (.ci/run); there a missing promtool is a failure, not a skip.
      expect(promtool, 'promtool on PATH').not.toBe('');
      const cwd = join(deploy, 'prometheus');
      const check = await exec(promtool, ['check', 'rules', 'alerts.yml'], { cwd });
      expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/);
      const test = await exec(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd });
      expect(test.stdout).toContain('SUCCESS');
    },
  );
});
