import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { composeEnv, composeServices, filledEnvExample } from '../helpers/deploy-files.ts';

// compose.yaml's replicas and the Prometheus beside them agree with each other and with the app's
// own settings: the scrape reaches every replica's admin port, with the alert rules loaded.

const exec = promisify(execFile);
const prometheusFile = new URL('../../deploy/prometheus/prometheus.yml', import.meta.url).pathname;
const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();
const filled = filledEnvExample({
  SLACK_BOT_TOKEN: 'xoxb-1',
  SLACK_SIGNING_SECRET: 's',
  APPROVAL_BASE_URL: 'https://approvals.example.com',
  APPROVAL_APP_NAME: 'slack-approvals',
  APPROVAL_APP_KEY: 'k',
});
const replicas = Object.keys(composeServices()).filter((name) => /^app-\d+$/.test(name));

interface ScrapeConfig {
  rule_files: string[];
  scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
}

describe('compose.yaml', () => {
  it('scrapes every replica’s admin port as job slack-approvals, with the alert rules loaded', () => {
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    const config = parse(readFileSync(prometheusFile, 'utf8')) as ScrapeConfig;
    const job = config.scrape_configs.find((c) => c.job_name === 'slack-approvals');
    const targets = job?.static_configs.flatMap((s) => s.targets) ?? [];
    expect(targets.sort()).toEqual(
      replicas.map((name) => `${name}:${loadConfig(composeEnv(name, filled)).admin?.port}`).sort(),
    );
    expect(config.rule_files).toEqual(['alerts.yml']);
  });

  it('gives each replica a stop longer than the app’s grace, and publishes the admin port on loopback only', () => {
    for (const name of replicas) {
      const service = composeServices()[name];
      const config = loadConfig(composeEnv(name, filled));
      const stopSeconds = Number(/^(\d+)s$/.exec(service?.stop_grace_period ?? '')?.[1]);
      expect(stopSeconds * 1000, name).toBeGreaterThan(config.shutdown.graceMs);
      const admin = service?.ports?.find((p) => p.endsWith(`:${config.admin?.port}`));
      expect(admin, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it.skipIf(!promtool)(
    `passes promtool check config${promtool ? '' : ' (skipped: promtool is not installed)'}`,
    async () => {
      const { stdout } = await exec(promtool, ['check', 'config', prometheusFile]);
      expect(stdout).toContain('SUCCESS');
    },
  );
});
