import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every link README, docs/, an alert or an error message gives points at a file that exists and,
// with a #fragment, at a heading of it (as GitHub makes anchors from headings). README stays a
// front door: at most about 2,500 words.

const root = new URL('..', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(root, file), 'utf8');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(join(root, path)).isDirectory()) return filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

/** GitHub's anchors for a markdown file's headings (duplicates get -1, -2, …). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*$/.exec(line);
    if (!m?.[1]) continue;
    const slug = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  from: string;
  target: string;
}

/** Relative links of a markdown file: [text](target), images included; code spans skipped. */
function markdownLinks(file: string): Link[] {
  const text = read(file)
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => {
      const [path = '', fragment] = target.split('#');
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      return { from: file, target: fragment ? `${resolved}#${fragment}` : resolved };
    });
}

/** Links named in code and configuration: `README.md#…`, `docs/….md` with or without #…. */
function namedLinks(file: string): Link[] {
  return [...read(file).matchAll(/\b((?:docs\/[\w./-]+|README)\.md)(#[\w-]+)?/g)].map((m) => ({
    from: file,
    target: `${m[1]}${m[2] ?? ''}`,
  }));
}

function broken(links: Link[]): string[] {
  return links.flatMap(({ from, target }) => {
    const [path = '', fragment] = target.split('#');
    if (!existsSync(join(root, path))) return [`${from}: ${target} (no such file)`];
    if (fragment && (!path.endsWith('.md') || !anchorsOf(path).has(fragment)))
      return [`${from}: ${target} (no such heading)`];
    return [];
  });
}

const markdown = [
  'README.md',
  ...filesUnder('docs', (f) => f.endsWith('.md')),
  ...['deploy/README.md', 'src/README.md', 'test/README.md', 'bench/README.md'].filter((f) =>
    existsSync(join(root, f)),
  ),
];
const code = [
  ...filesUnder('src', (f) => /\.(ts|js|mjs)$/.test(f)),
  ...filesUnder('deploy', (f) => /\.(ya?ml|json|example)$/.test(f)),
  ...filesUnder('scripts', (f) => f.endsWith('.mjs')),
  '.env.example',
  'Dockerfile',
  'compose.yaml',
  'manifest.yml',
];

describe('links in the docs, the alerts and the messages', () => {
  it('makes anchors as GitHub does', () => {
    expect([...anchorsOf('docs/security.md')]).toEqual(
      expect.arrayContaining([
        'secrets-where-they-go-and-where-they-never-go',
        'scopes-and-why-each',
        'who-can-read-what',
      ]),
    );
    expect(anchorsOf('docs/connect-slack.md').has('with-the-slack-cli-slack-run')).toBe(true);
  });

  it('every relative link in README and docs points at a file and heading that exist', () => {
    const links = markdown.flatMap(markdownLinks);
    expect(links.length).toBeGreaterThan(30);
    expect(broken(links)).toEqual([]);
  });

  it('every docs link in the code, the alerts and the deployment files points somewhere real', () => {
    const links = code.flatMap(namedLinks);
    // The alerts' runbooks, the start hook's and the backup command's pointers at least.
    expect(links.filter((l) => /alerts\.yml$/.test(l.from) && l.target.includes('#'))).toHaveLength(
      9,
    );
    expect(broken(links.map((l) => ({ ...l, from: relative(root, join(root, l.from)) })))).toEqual(
      [],
    );
  });

  it('every picture in docs/images/ is shown by a page, exists where shown, and stays small', () => {
    // The pictures come from the sandbox (`npm run docs:screenshots`); one no page shows is left
    // over from an earlier run, and a big one makes the page slow to send to everyone.
    const shown = new Set(
      markdown
        .flatMap(markdownLinks)
        .map((l) => l.target)
        .filter((t) => t.startsWith('docs/images/')),
    );
    const pictures = filesUnder('docs/images', (f) => f.endsWith('.png'));
    expect(pictures.length).toBeGreaterThanOrEqual(14);
    expect(pictures.filter((f) => !shown.has(f))).toEqual([]);
    expect([...shown].filter((f) => !existsSync(join(root, f)))).toEqual([]);
    expect(pictures.filter((f) => statSync(join(root, f)).size > 150 * 1024)).toEqual([]);
    for (const page of ['docs/for-everyone.md', 'docs/for-everyone.zh.md'])
      expect(markdownLinks(page).filter((l) => l.target.startsWith('docs/images/')).length).toBe(7);
  });

  it('keeps README a front door: at most about 2,500 words', () => {
    expect(read('README.md').split(/\s+/).filter(Boolean).length).toBeLessThanOrEqual(2500);
  });
});
