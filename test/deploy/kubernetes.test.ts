import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { imageEnv } from '../helpers/deploy-files.ts';

// deploy/kubernetes, rendered as `kubectl apply -k` would render it, checked against Kubernetes'
// schemas (kubernetes-models, no network) and against the app's own settings: the ports, the
// probes, the grace and the drain are read from what the app would run with, not written twice.

const dir = new URL('../../deploy/kubernetes/', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(dir, file), 'utf8');
const exec = promisify(execFile);

interface Kustomization {
  resources: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}
type Resource = { kind: string; metadata: { name: string } } & Record<string, unknown>;

/** The resources of the kustomization, with its image override applied (all it uses). */
function render(): Resource[] {
  const k = parseYaml(read('kustomization.yaml')) as Kustomization;
  const resources = k.resources.flatMap((file) =>
    parseAllDocuments(read(file)).map((d) => d.toJS() as Resource),
  );
  const images = new Map((k.images ?? []).map((i) => [i.name, i]));
  for (const r of resources) {
    const spec = (
      r as {
        spec?: {
          template?: { spec?: { containers?: IContainer[]; initContainers?: IContainer[] } };
        };
      }
    ).spec?.template?.spec;
    for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
      const image = images.get(c.image ?? '');
      if (image) c.image = `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
    }
  }
  return resources;
}

const resources = render();
const one = <T>(kind: string, make: (r: Resource) => T): T => {
  const found = resources.filter((r) => r.kind === kind);
  if (found.length !== 1)
    throw new Error(`deploy/kubernetes has ${found.length} ${kind}s, not one`);
  return make(found[0] as Resource);
};
const deployment = one('Deployment', (r) => new Deployment(r as never));
const service = one('Service', (r) => new Service(r as never));
const pdb = one('PodDisruptionBudget', (r) => new PodDisruptionBudget(r as never));
const configMap = one('ConfigMap', (r) => new ConfigMap(r as never));
const pod = deployment.spec?.template.spec;
const app = pod?.containers.find((c) => c.name === 'app');
const secret = parseEnv(read('secret.env.example')) as Record<string, string>;

/** What the app container runs with: the image's variables, the ConfigMap and the Secret. */
const appConfig = () =>
  loadConfig({
    ...imageEnv(),
    ...configMap.data,
    // The example's placeholders, made into values the app accepts.
    ...secret,
    SLACK_BOT_TOKEN: 'xoxb-1-placeholder',
    DATABASE_URL: (secret.DATABASE_URL ?? '').replace('…', 'password'),
  });
const portNamed = (name: unknown) =>
  typeof name === 'number' ? name : app?.ports?.find((p) => p.name === name)?.containerPort;

const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();

/** The variables docs/configuration.md's "What a production install sets" names, and where each goes. */
function productionSettings(): Array<{ name: string; where: string }> {
  const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const section = /\n## What a production install sets\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? '';
  return [...section.matchAll(/^\| `([A-Z_]+)` \|.*\| (ConfigMap|Secret) \|$/gm)].map((m) => ({
    name: m[1] as string,
    where: m[2] as string,
  }));
}

interface PodMonitor {
  metadata: { name: string };
  spec: {
    jobLabel?: string;
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: Array<{ port: string; path: string }>;
  };
}
type Labels = Record<string, string>;
const NAMESPACE = 'approvals';

/**
 * The target labels of the usual `kubernetes-pods` job (Prometheus' example configuration and the
 * community chart): the job's own name, the address the annotations name, the pod's labels mapped.
 */
function annotationScrapeLabels(ip: string, pod: string, podLabels: Labels): Labels {
  const port = deployment.spec?.template.metadata?.annotations?.['prometheus.io/port'];
  const mapped = Object.entries(podLabels).map(([k, v]) => [k.replace(/[^a-zA-Z0-9_]/g, '_'), v]);
  return {
    job: 'kubernetes-pods',
    instance: `${ip}:${port}`,
    namespace: NAMESPACE,
    pod,
    ...Object.fromEntries(mapped),
  };
}

/** The target labels the Prometheus Operator gives a PodMonitor's target. */
function podMonitorScrapeLabels(
  monitor: PodMonitor,
  ip: string,
  pod: string,
  podLabels: Labels,
  port: number | undefined,
): Labels {
  const job =
    (monitor.spec.jobLabel && podLabels[monitor.spec.jobLabel]) ||
    `${NAMESPACE}/${monitor.metadata.name}`;
  return {
    job,
    instance: `${ip}:${port}`,
    namespace: NAMESPACE,
    pod,
    container: 'app',
    endpoint: monitor.spec.podMetricsEndpoints[0]?.port ?? '',
  };
}

/** A rule's annotations, its templates filled in with `values`. */
function annotationsOf(alert: string, values: Record<string, string>): Labels {
  const rules = parseYaml(
    readFileSync(new URL('../../deploy/prometheus/alerts.yml', import.meta.url), 'utf8'),
  ) as { groups: Array<{ rules: Array<{ alert: string; annotations: Labels }> }> };
  const rule = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === alert);
  return Object.fromEntries(
    Object.entries(rule?.annotations ?? {}).map(([k, v]) => [
      k,
      v.replace(/\{\{ ([^}]+) \}\}/g, (_, name: string) => values[name] ?? ''),
    ]),
  );
}

const series = (name: string, labels: Labels, values: string) => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`,
  values,
});

/**
 * deploy/prometheus/alerts.yml under promtool, on two replicas scraped with these labels: both up,
 * one whose delivery stalls with work due. The stalled one pages; nothing says the app is absent
 * or a replica down.
 */
async function promtoolTest(
  stuck: Labels,
  fine: Labels,
): Promise<{ code: number; output: string }> {
  const test = {
    rule_files: [new URL('../../deploy/prometheus/alerts.yml', import.meta.url).pathname],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [
          ...[stuck, fine].flatMap((labels) => [
            series('up', labels, '1x20'),
            series('slack_approvals_service_up', labels, '1x20'),
          ]),
          series('slack_approvals_delivery_stalled_seconds', stuck, '0 60+60x19'),
          series('slack_approvals_delivery_stalled_seconds', fine, '0x20'),
        ],
        alert_rule_test: [
          {
            eval_time: '10m',
            alertname: 'SlackApprovalsDeliveryStalled',
            exp_alerts: [
              {
                exp_labels: { severity: 'page', instance: stuck.instance },
                // Stalled 10 minutes at 10m; promtool compares the annotations too.
                exp_annotations: annotationsOf('SlackApprovalsDeliveryStalled', {
                  '$labels.instance': stuck.instance ?? '',
                  '$value | humanizeDuration': '10m 0s',
                }),
              },
            ],
          },
          ...['SlackApprovalsAbsent', 'SlackApprovalsReplicaDown'].map((alertname) => ({
            eval_time: '10m',
            alertname,
            exp_alerts: [],
          })),
        ],
      },
    ],
  };
  const file = join(mkdtempSync(join(tmpdir(), 'alerts-')), 'kubernetes.test.yml');
  writeFileSync(file, stringifyYaml(test));
  const run = spawnSync(promtool, ['test', 'rules', file], { encoding: 'utf8' });
  return { code: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}

describe('deploy/kubernetes', () => {
  it('validates every resource against Kubernetes’ schemas', () => {
    expect(resources.map((r) => r.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'Service',
    ]);
    for (const r of [deployment, service, pdb, configMap]) expect(() => r.validate()).not.toThrow();
  });

  it('runs two replicas or more on Postgres, replacing one at a time', () => {
    expect(deployment.spec?.replicas).toBeGreaterThanOrEqual(2);
    expect(appConfig().databaseUrl).toMatch(/^postgres:\/\//);
    expect(deployment.spec?.strategy).toMatchObject({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0 },
    });
    // A disruption leaves at least one replica, and never blocks a drain for ever.
    const min = pdb.spec?.minAvailable as number;
    expect(min).toBeGreaterThanOrEqual(1);
    expect(min).toBeLessThan(deployment.spec?.replicas ?? 0);
    expect(pdb.spec?.selector?.matchLabels).toEqual(deployment.spec?.template.metadata?.labels);
  });

  it('opens the ports the app listens on, probes the admin port, and routes only Slack’s port', () => {
    const config = appConfig();
    expect(config.mode).toBe('http');
    expect(portNamed('slack')).toBe(config.port);
    expect(config.admin).toEqual({ port: portNamed('admin'), host: '0.0.0.0' });
    expect(app?.livenessProbe?.httpGet).toMatchObject({ path: '/healthz' });
    expect(app?.readinessProbe?.httpGet).toMatchObject({ path: '/readyz' });
    expect(app?.startupProbe?.httpGet).toMatchObject({ path: '/healthz' });
    for (const probe of [app?.livenessProbe, app?.readinessProbe, app?.startupProbe])
      expect(portNamed(probe?.httpGet?.port)).toBe(config.admin?.port);
    expect(service.spec?.selector).toEqual(deployment.spec?.template.metadata?.labels);
    expect(service.spec?.ports?.map((p) => portNamed(p.targetPort))).toEqual([config.port]);
  });

  it('waits out the drain before the SIGTERM and gives the stop longer than the app’s grace', () => {
    const { graceMs, drainMs } = appConfig().shutdown;
    const preStopMs = (app?.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
    expect(preStopMs).toBe(drainMs);
    // The kubelet counts its grace from the start of preStop; the app exits 2 s past its own.
    expect((pod?.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(
      preStopMs + graceMs + 2000,
    );
  });

  it('lets Prometheus scrape /metrics on the admin port', () => {
    const annotations = deployment.spec?.template.metadata?.annotations ?? {};
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(Number(annotations['prometheus.io/port'])).toBe(appConfig().admin?.port);
    expect(annotations['prometheus.io/path']).toBe('/metrics');
  });

  it('takes the Slack and database secrets from a Secret, and runs npm run migrate before the app', () => {
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])])
      expect(c.envFrom, c.name).toContainEqual({ secretRef: { name: 'slack-approvals' } });
    expect(Object.keys(secret).sort()).toEqual([
      'APPROVAL_APP_KEY',
      'DATABASE_URL',
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
    ]);
    // No secret in the ConfigMap.
    expect(Object.keys(configMap.data ?? {}).filter((k) => k in secret)).toEqual([]);
    const migrate = pod?.initContainers?.find((c) => c.name === 'migrate');
    expect(migrate?.command).toEqual(['npm', 'run', 'migrate']);
    expect(migrate?.image).toBe(app?.image);
    const scripts = (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.migrate).toContain('operator/migrate-cli.js');
  });

  it('runs as a non-root user on a read-only root filesystem, with resources set', () => {
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(pod?.automountServiceAccountToken).toBe(false);
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      expect(c.securityContext, c.name).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.resources?.requests, c.name).toMatchObject({ cpu: expect.any(String) });
      expect(c.resources?.limits?.memory, c.name).toBeDefined();
    }
  });

  it('keeps a replica in service through one slow readiness answer', () => {
    // /readyz asks the database through the pool every replica shares with its work: one slow
    // answer is every replica's at once, and one miss allowed would empty the Service.
    const probe = app?.readinessProbe;
    expect(probe?.failureThreshold).toBeGreaterThanOrEqual(3);
    expect(probe?.timeoutSeconds).toBeGreaterThan(1);
    // Still out of service within half a minute of a database that really does not answer.
    expect((probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3)).toBeLessThanOrEqual(30);
  });

  it('sets every setting docs/configuration.md says a production install sets, where it says', () => {
    const documented = productionSettings();
    expect(documented.map((s) => s.name)).toContain('APPROVAL_WEB_URL');
    for (const { name, where } of documented) {
      const holder = where === 'Secret' ? secret : configMap.data;
      expect(holder?.[name], `${name} in the ${where}`).toBeTruthy();
    }
    // And the ConfigMap holds nothing the table does not name: what it sets is documented there.
    expect(Object.keys(configMap.data ?? {}).sort()).toEqual(
      documented
        .filter((s) => s.where === 'ConfigMap')
        .map((s) => s.name)
        .sort(),
    );
    expect(appConfig().approval.webUrl).toBe(configMap.data?.APPROVAL_WEB_URL);
  });

  it.skipIf(!promtool && !process.env.CI)(
    `fires the alerts, and not SlackApprovalsAbsent, on the series Prometheus scrapes from these pods${promtool ? '' : ' (skipped: no promtool; Debian package prometheus)'}`,
    async () => {
      expect(promtool, 'promtool on PATH').not.toBe('');
      const annotations = deployment.spec?.template.metadata?.annotations ?? {};
      const podMonitor = parseYaml(read('podmonitor.yaml')) as PodMonitor;
      // Whatever selects the pods must select these pods, on a port they open.
      const podLabels = deployment.spec?.template.metadata?.labels ?? {};
      expect(podMonitor.spec.selector.matchLabels).toEqual(podLabels);
      const endpoint = podMonitor.spec.podMetricsEndpoints[0];
      expect(portNamed(endpoint?.port)).toBe(appConfig().admin?.port);
      expect(endpoint?.path).toBe(annotations['prometheus.io/path']);
      const scrapes = {
        annotations: (ip: string, pod: string) => annotationScrapeLabels(ip, pod, podLabels),
        podMonitor: (ip: string, pod: string) =>
          podMonitorScrapeLabels(podMonitor, ip, pod, podLabels, portNamed(endpoint?.port)),
      };
      for (const [how, labelsOf] of Object.entries(scrapes)) {
        const stuck = labelsOf('10.0.0.1', 'slack-approvals-1');
        const fine = labelsOf('10.0.0.2', 'slack-approvals-2');
        const result = await promtoolTest(stuck, fine);
        expect(result.code, `${how}:\n${result.output}`).toBe(0);
      }
    },
  );

  const kubectl = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();
  it.skipIf(!kubectl)(
    `renders the same with kubectl kustomize${kubectl ? '' : ' (skipped: kubectl is not installed)'}`,
    async () => {
      const { stdout } = await exec(kubectl, ['kustomize', dir]);
      const byKind = (list: Resource[]) =>
        Object.fromEntries(list.map((r) => [`${r.kind}/${r.metadata.name}`, r]));
      expect(byKind(parseAllDocuments(stdout).map((d) => d.toJS() as Resource))).toEqual(
        byKind(resources),
      );
    },
  );
});
