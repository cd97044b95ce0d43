import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/harness.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/test-sandbox.ts';

// The sandbox's person with a delegate while away (Wang Fang, new requests to Maria Lopez), through
// the page's own calls, answered by the real app: watched without a workspace.

let page: TestSandbox;
beforeAll(async () => {
  page = await startTestSandbox();
});
afterAll(async () => {
  await page?.close();
});

const id = (login: string) => page.sandbox.workspace.userByLogin(login).id;

describe('the sandbox’s delegate while away', () => {
  it('offers Zhao Min her leader’s delegate in the form, saying why', async () => {
    const zhao = id('zhao.min@corp.example');
    await page.post('/sandbox/api/message', {
      user: zhao,
      channel: page.sandbox.workspace.channelByName('general').id,
      text: '/approve Switch',
    });
    const view = await waitFor(
      async () =>
        (await page.state(zhao)).views.find((v) => JSON.stringify(v.view).includes('委托')),
      10_000,
      'the filled-in form',
    );
    const shown = JSON.stringify(view.view);
    expect(shown).toContain(`"initial_user":"${id('maria.lopez@corp.example')}"`);
    expect(shown).toMatch(/Wang Fang \d+月\d+日 前不在岗，委托 Maria Lopez 代为审批/);
  });

  it('shows Wang Fang on her Home who gets her new requests, with Change and Clear', async () => {
    const wang = id('wang.fang@corp.example');
    await page.post('/sandbox/api/home', { user: wang });
    const home = await waitFor(() => page.sandbox.workspace.homes.get(wang), 10_000, 'Home');
    const shown = JSON.stringify(home);
    expect(shown).toContain(`新申请将发给 <@${id('maria.lopez@corp.example')}>`);
    expect(shown).toContain('"action_id":"delegate_clear"');
  });
});
