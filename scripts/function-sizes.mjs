// The longest and most complex functions in src/ (outside the sandbox and the simulator), as
// Biome measures them: lines per function (blank lines skipped) and cognitive complexity.
// `npm run sizes` prints the ten longest and how many pass 60 lines or complexity 15; the
// thresholds are the ones the project's reviews use, not lint rules the build enforces.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAX_LINES = 60;
const MAX_COMPLEXITY = 15;
const config = {
  root: true,
  formatter: { enabled: false },
  assist: { enabled: false },
  linter: {
    enabled: true,
    rules: {
      preset: 'none',
      complexity: {
        noExcessiveLinesPerFunction: {
          level: 'error',
          options: { maxLines: MAX_LINES, skipBlankLines: true },
        },
        noExcessiveCognitiveComplexity: {
          level: 'error',
          options: { maxAllowedComplexity: MAX_COMPLEXITY },
        },
      },
    },
  },
};

const dir = mkdtempSync(join(tmpdir(), 'function-sizes-'));
writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
const run = spawnSync(
  'npx',
  ['biome', 'lint', `--config-path=${dir}`, '--reporter=json', '--max-diagnostics=none', 'src'],
  { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
);
rmSync(dir, { recursive: true, force: true });
const report = JSON.parse(run.stdout);

const nameAt = (path, line) => {
  const text = readFileSync(path, 'utf8').split('\n')[line - 1] ?? '';
  const match =
    /function\s*\*?\s*([\w$]+)/.exec(text) ??
    /([\w$]+)\s*[:=]\s*(?:async\s*)?(?:\(|function|[\w$]+\s*=>)/.exec(text) ??
    /(?:async\s+)?([\w$]+)\s*\(/.exec(text);
  const name = match?.[1];
  return name && name !== 'async' ? name : `(callback at line ${line})`;
};

const byPlace = new Map();
const counted = (path) => path.endsWith('.ts') && !/^src\/(sandbox|simulator)\//.test(path);
for (const d of report.diagnostics) {
  if (!d.category.includes('noExcessive') || !counted(d.location.path)) continue;
  // "too many lines (66)" and "Excessive complexity of 60": the first number is the measure.
  const value = Number(/(\d+)/.exec(d.message)?.[1]);
  const { path, start } = d.location;
  const key = `${path}:${start.line}`;
  const entry = byPlace.get(key) ?? { path, line: start.line, name: nameAt(path, start.line) };
  if (d.category.endsWith('noExcessiveLinesPerFunction')) entry.lines = value;
  else if (d.category.endsWith('noExcessiveCognitiveComplexity')) entry.complexity = value;
  byPlace.set(key, entry);
}
// Biome places a complexity finding on the function's name and a length finding on its first
// token: both on the same line for every declaration form the project uses.
const all = [...byPlace.values()];
const long = all.filter((f) => f.lines !== undefined).sort((a, b) => b.lines - a.lines);
console.table(
  long.slice(0, 10).map((f) => ({
    function: f.name,
    where: `${f.path}:${f.line}`,
    lines: f.lines,
    complexity: f.complexity ?? `≤ ${MAX_COMPLEXITY}`,
  })),
);
console.error(
  `${long.length} functions over ${MAX_LINES} lines, ` +
    `${all.filter((f) => f.complexity !== undefined).length} over cognitive complexity ${MAX_COMPLEXITY}`,
);
