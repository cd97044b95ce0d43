// CI's verdict on `npm audit --omit=dev --json` (read on stdin), for .ci/run:
// - a high or critical advisory in a production dependency (what the image ships) fails the run,
//   naming the packages and how to see more (`npm audit`);
// - a moderate or low one is printed and the run goes on (Renovate brings its fix as an update);
// - a registry that does not answer the audit (a mirror without the endpoint, a machine offline)
//   skips it with a message: the run must not fail because the audit could not be asked.
// Development dependencies are not audited here: they never reach the image.
import { readFileSync } from 'node:fs';

const FAILING = ['critical', 'high'];

const text = readFileSync(0, 'utf8');
let report;
try {
  report = JSON.parse(text);
} catch {
  report = undefined;
}
const counts = report?.metadata?.vulnerabilities;
if (!counts || typeof report.vulnerabilities !== 'object') {
  const why = report?.message ?? report?.error?.summary ?? (text.trim() || 'no answer');
  console.error(`npm audit skipped: the registry did not answer it (${why.split('\n')[0]})`);
  process.exit(0);
}
const found = Object.values(report.vulnerabilities);
const failing = found.filter((v) => FAILING.includes(v.severity));
const listed = (items) => items.map((v) => `${v.name} (${v.severity})`).join(', ');
if (failing.length > 0) {
  console.error(
    `npm audit: ${failing.length} production dependencies with a high or critical advisory: ${listed(failing)}. Run npm audit --omit=dev for the advisories and their fixes.`,
  );
  process.exit(1);
}
console.error(
  found.length === 0
    ? 'npm audit: no known advisory in the production dependencies'
    : `npm audit: lower advisories only, not failing the run: ${listed(found)}`,
);
