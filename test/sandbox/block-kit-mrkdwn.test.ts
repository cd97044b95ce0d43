import { beforeAll, describe, expect, it } from 'vitest';

// The sandbox page's mrkdwn renderer on its own, on a small stand-in of the browser's DOM (the
// browser test, sandbox-browser.test.ts, needs Chromium): what a surface shows as text.

class FakeNode {
  readonly children: Array<FakeNode | string> = [];
  className = '';
  readonly attributes = new Map<string, string>();
  constructor(readonly tagName: string) {}
  append(...items: Array<FakeNode | string>) {
    this.children.push(...items);
  }
  setAttribute(name: string, value: string) {
    this.attributes.set(name, value);
  }
  addEventListener() {}
  get textContent(): string {
    return this.children.map((c) => (typeof c === 'string' ? c : c.textContent)).join('');
  }
  set textContent(text: string) {
    this.children.splice(0, this.children.length, text);
  }
}

type Render = (text: string, ctx: unknown) => FakeNode;
let mrkdwn: Render;

beforeAll(async () => {
  Object.assign(globalThis, {
    document: {
      createElement: (tag: string) => new FakeNode(tag),
      createDocumentFragment: () => new FakeNode('#fragment'),
    },
  });
  // The page's own JavaScript, which has no types: imported by a path the compiler does not read.
  const page = new URL('../../src/sandbox/page/block-kit.js', import.meta.url).href;
  ({ mrkdwn } = (await import(page)) as { mrkdwn: Render });
});

const ctx = { name: (id: string) => id, channelName: (id: string) => id };

describe('the sandbox page’s mrkdwn', () => {
  it('draws an emoji name the same in a link’s text as outside it, as Slack does', () => {
    // Home links a title to its thread; the request message shows it unlinked.
    const linked = mrkdwn('*<https://x.example/t|:bell: Launch>*', ctx).textContent;
    const plain = mrkdwn('*:bell: Launch*', ctx).textContent;
    expect(linked).toBe('🔔 Launch');
    expect(plain).toBe('🔔 Launch');
  });

  it('shows a bare link’s URL as it is', () => {
    expect(mrkdwn('<https://x.example/:bell:>', ctx).textContent).toBe('https://x.example/:bell:');
  });
});
