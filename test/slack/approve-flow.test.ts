import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from '../helpers/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHarness();
});
afterEach(() => h.close());

describe('/approve', () => {
  it('opens the modal, suggests the nearest leader, and starts the approval on submit', async () => {
    const view = await h.openModal('li.wei@corp.example', 'general', 'New storage node');
    const json = JSON.stringify(view.view);
    expect(json).toContain('Cloud Platform 云平台 › Infrastructure 基础架构部 › Storage 存储组');
    const maria = h.user('maria.lopez@corp.example');
    expect(json).toContain(`"initial_user":"${maria}"`);

    const { errors } = await h.slack.submitView(view.id, { note_input: 'For the Q3 expansion' });
    expect(errors).toBeUndefined();
    const [approval] = await waitFor(() =>
      h.sim.approvals().length > 0 ? h.sim.approvals() : undefined,
    );
    expect(approval).toMatchObject({
      title: 'New storage node',
      note: 'For the Q3 expansion',
      requester: 'li.wei@corp.example',
      approver: 'maria.lopez@corp.example',
    });
    const general = h.channel('general');
    const parent = await waitFor(() => h.workspace.history(general)[0]);
    expect(parent.text).toContain(approval?.djbh);
  });
});
