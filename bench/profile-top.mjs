// `node bench/profile-top.mjs file.cpuprofile [n]`: the functions with the most self time, and
// the files (src/, node_modules packages, node internals) they belong to.
import { readFileSync } from 'node:fs';

const [file, n = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
const deltas = profile.timeDeltas;
let total = 0;
profile.samples.forEach((id, i) => {
  const us = deltas[i] ?? 0;
  total += us;
  self.set(id, (self.get(id) ?? 0) + us);
});
const where = (url) => {
  if (!url) return '(native)';
  const mod = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (mod) return mod[1];
  const src = url.match(/\/(src\/.*)$/);
  if (src) return src[1];
  return url.startsWith('node:') ? url : url.replace(/^.*\//, '');
};
const fns = new Map();
const areas = new Map();
for (const [id, us] of self) {
  const { callFrame } = byId.get(id);
  const area = where(callFrame.url);
  const key = `${callFrame.functionName || '(anonymous)'} ${area}:${callFrame.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  areas.set(area, (areas.get(area) ?? 0) + us);
}
const top = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(n))
    .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
process.stdout.write(
  `total sampled: ${(total / 1000).toFixed(0)} ms\n\nby area:\n${top(areas)}\n\nby function:\n${top(fns)}\n`,
);
