import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
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
