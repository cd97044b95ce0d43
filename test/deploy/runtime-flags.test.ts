import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const nodeFlags = (command: string) => command.match(/--[\w-]+=\S+?(?=["\s,]|$)/g) ?? [];

describe("the app's Node settings", () => {
  it('are the same for npm start and the image (the bench measures the sweep with them)', () => {
    const start = (
      JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
    ).scripts.start;
    const cmd = readFileSync('Dockerfile', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('CMD '));
    expect(nodeFlags(start)).toContain('--max-semi-space-size=8');
    expect(nodeFlags(cmd ?? '')).toEqual(nodeFlags(start));
  });
});

describe('the Node the project names', () => {
  const read = (file: string) => readFileSync(file, 'utf8');
  const major = read('.nvmrc').trim();
  const pkg = JSON.parse(read('package.json')) as {
    engines: { node: string };
    devDependencies: Record<string, string>;
  };

  it('is one LTS line everywhere: .nvmrc, the image’s base, @types/node and the docs', () => {
    expect(major).toMatch(/^\d+$/);
    expect(read('Dockerfile')).toContain(
      `ARG BASE_IMAGE=docker.io/library/node:${major}-trixie-slim`,
    );
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${major}\\.`));
    for (const doc of ['README.md', 'docs/developing.md'])
      expect(read(doc), doc).toContain(`Node ${major} (the active LTS;`);
    expect(read('docs/deploying.md')).toContain(`\`.nvmrc\` names ${major}`);
  });

  it('allows the line it names, and the older one still tested', () => {
    const lowest = Number(pkg.engines.node.match(/^>=(\d+)$/)?.[1]);
    expect(lowest).toBeLessThanOrEqual(Number(major));
    expect(read('docs/deploying.md')).toContain(`\`engines\` says \`>=${lowest}\``);
  });
});
