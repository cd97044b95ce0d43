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
