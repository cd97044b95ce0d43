import { describe, expect, it } from 'vitest';
import { harnessPerTest, waitFor } from '../helpers/harness.ts';

// The service's column sizes, as a person meets them in the form.

const harness = harnessPerTest();
// 3,000 rockets fit Slack's 3,000-character field; adapted to :rocket: they are 24,000 characters.
const ROCKETS = '🚀'.repeat(3000);

describe('the note limit', () => {
  it('refuses in the form a note that adapts to more than the service holds, naming the limit', async () => {
    const h = await harness();
    const view = await h.openModal('sam.taylor@corp.example');
    const { errors } = await h.slack.submitView(view.id, { note_input: ROCKETS });
    expect(errors?.note).toContain('20000');
    expect(h.sim.approvals()).toHaveLength(0);
  });

  it('takes APPROVAL_NOTE_LIMIT for an install that missed the schema update', async () => {
    const h = await harness({ serviceNoteLimit: 5000, env: { APPROVAL_NOTE_LIMIT: '5000' } });
    const view = await h.openModal('sam.taylor@corp.example');
    const { errors } = await h.slack.submitView(view.id, { note_input: '🚀'.repeat(700) });
    expect(errors?.note).toContain('5000');
  });

  it('tells the person the note is too long when the service says so, and the operator why', async () => {
    // Misconfigured: the service holds 5,000, the app believes 20,000.
    const h = await harness({ serviceNoteLimit: 5000 });
    const view = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(view.id, { note_input: '🚀'.repeat(700) });
    const form = await waitFor(
      () => {
        const shown = JSON.stringify(h.workspace.views.get(view.id)?.view ?? {});
        return shown.includes('longer than the approval service accepts') && shown;
      },
      5000,
      'the form with the banner',
    );
    expect(form).toContain('The note is longer than the approval service accepts.');
    expect(h.sim.approvals()).toHaveLength(0);
    expect(h.logs.lines.join('\n')).toContain('APPROVAL_NOTE_LIMIT');
  });
});
