import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// .ci/run pipes `npm audit --omit=dev --json` into scripts/audit-verdict.mjs: what each answer of
// npm does to the run. The reports are in npm's own shape (auditReportVersion 2).

const root = new URL('..', import.meta.url).pathname;
const verdict = (input: string) => {
  const run = spawnSync(process.execPath, ['scripts/audit-verdict.mjs'], {
    cwd: root,
    input,
    encoding: 'utf8',
  });
  return { code: run.status, said: run.stderr.trim() };
};

const report = (...found: Array<[name: string, severity: string]>) => {
  const counts = { info: 0, low: 0, moderate: 0, high: 0, critical: 0, total: found.length };
  for (const [, severity] of found) counts[severity as keyof typeof counts] += 1;
  return JSON.stringify({
    auditReportVersion: 2,
    vulnerabilities: Object.fromEntries(
      found.map(([name, severity]) => [
        name,
        { name, severity, isDirect: true, via: [], effects: [], nodes: [`node_modules/${name}`] },
      ]),
    ),
    metadata: { vulnerabilities: counts, dependencies: { prod: 120, dev: 0, total: 120 } },
  });
};

describe('CI’s npm audit', () => {
  it('fails the run on a high or critical advisory in a production dependency, naming it', () => {
    const answer = verdict(report(['axios', 'high'], ['pino', 'low']));
    expect(answer.code).toBe(1);
    expect(answer.said).toContain('axios (high)');
    expect(answer.said).toContain('npm audit --omit=dev');
    expect(verdict(report(['pg', 'critical'])).code).toBe(1);
  });

  it('prints lower advisories and goes on', () => {
    expect(verdict(report(['zod', 'moderate']))).toEqual({
      code: 0,
      said: 'npm audit: lower advisories only, not failing the run: zod (moderate)',
    });
    expect(verdict(report()).said).toBe(
      'npm audit: no known advisory in the production dependencies',
    );
  });

  it('skips with a message, and passes, where the registry does not answer the audit', () => {
    // What npm prints where the registry has no bulk advisory endpoint (this machine's mirror).
    const refused = JSON.stringify({
      message:
        '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk',
      method: 'POST',
      statusCode: 405,
      body: '',
      error: { summary: '', detail: '' },
    });
    expect(verdict(refused)).toEqual({
      code: 0,
      said: 'npm audit skipped: the registry did not answer it (405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk)',
    });
    // Offline: npm prints nothing on stdout at all.
    expect(verdict('')).toEqual({
      code: 0,
      said: 'npm audit skipped: the registry did not answer it (no answer)',
    });
  });
});
