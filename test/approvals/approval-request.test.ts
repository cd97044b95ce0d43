import { describe, expect, it } from 'vitest';
import { adaptText } from '../../src/approvals/acceptable-text.ts';
import { prepareApproval } from '../../src/approvals/approval-request.ts';

describe('adaptText', () => {
  it('leaves plain and CJK text alone', () => {
    expect(adaptText('扩容申请 for Q3 — 谢谢')).toEqual({
      text: '扩容申请 for Q3 — 谢谢',
      changes: [],
    });
  });

  it('turns an ASCII quote into a typographic one', () => {
    expect(adaptText("it's Li's")).toEqual({ text: 'it’s Li’s', changes: ['quote'] });
  });

  it('writes emoji as Slack names them, skin tones and families included', () => {
    expect(adaptText('ship it 🚀👍🏽 👨‍👩‍👧')).toEqual({
      text: 'ship it :rocket::+1::skin-tone-4: :man-woman-girl:',
      changes: ['emoji'],
    });
  });

  it('keeps emoji inside the Basic Multilingual Plane, which the service stores', () => {
    expect(adaptText('☕ ✅ ❤️')).toEqual({ text: '☕ ✅ ❤️', changes: [] });
  });

  it('replaces other characters outside the Basic Multilingual Plane and says so', () => {
    expect(adaptText('𠀀 and 𝒜')).toEqual({ text: '□ and □', changes: ['unsupported-character'] });
  });

  it('leaves backslashes for the client to escape', () => {
    expect(adaptText('C:\\temp\\')).toEqual({ text: 'C:\\temp\\', changes: [] });
  });
});

describe('prepareApproval', () => {
  const draft = { title: 'New node', note: 'Q3', approverLogin: 'maria.lopez@corp.example' };

  it('builds the service input from a good draft', () => {
    expect(prepareApproval(draft, 'li.wei@corp.example')).toEqual({
      ok: true,
      input: {
        requester: 'li.wei@corp.example',
        approver: 'maria.lopez@corp.example',
        title: 'New node',
        note: 'Q3',
      },
      changes: [],
    });
  });

  it('reports every changed kind once across title and note', () => {
    const prepared = prepareApproval(
      { ...draft, title: "Li's 🚀", note: "🚀 it's" },
      'li.wei@corp.example',
    );
    expect(prepared).toMatchObject({
      ok: true,
      input: { title: 'Li’s :rocket:', note: ':rocket: it’s' },
    });
    expect(prepared.ok && prepared.changes.sort()).toEqual(['emoji', 'quote']);
  });

  it('takes a 20,000-character note and refuses, not truncates, one of 20,001', () => {
    expect(prepareApproval({ ...draft, note: '长'.repeat(20_000) }, 'li.wei@corp.example').ok).toBe(
      true,
    );
    expect(prepareApproval({ ...draft, note: '长'.repeat(20_001) }, 'li.wei@corp.example')).toEqual(
      {
        ok: false,
        problems: { note: { code: 'too-long', limit: 20_000, length: 20_001 } },
      },
    );
  });

  it('holds notes to 5,000 characters for an install that missed the schema update', () => {
    expect(
      prepareApproval({ ...draft, note: '长'.repeat(5001) }, 'li.wei@corp.example', {
        title: 200,
        note: 5000,
      }),
    ).toEqual({ ok: false, problems: { note: { code: 'too-long', limit: 5000, length: 5001 } } });
  });

  it('replaces half a surrogate pair, which would make the service read the whole request as empty', () => {
    const prepared = prepareApproval({ ...draft, note: 'x \ud800 y' }, 'li.wei@corp.example');
    expect(prepared).toMatchObject({ ok: true, input: { note: 'x □ y' } });
    expect(prepared.ok && prepared.changes).toEqual(['unsupported-character']);
  });

  it('counts the adapted text against the limit', () => {
    const title = `${'x'.repeat(195)}🚀`;
    expect(prepareApproval({ ...draft, title }, 'li.wei@corp.example')).toMatchObject({
      ok: false,
      problems: { title: { code: 'too-long', limit: 200, length: 203 } },
    });
  });

  it('reports every missing field at once, blank text counting as missing', () => {
    expect(
      prepareApproval({ title: '  ', note: '', approverLogin: undefined }, 'li.wei@corp.example'),
    ).toEqual({
      ok: false,
      problems: {
        title: { code: 'required' },
        note: { code: 'required' },
        approver: { code: 'required' },
      },
    });
  });

  it('refuses the requester as their own approver', () => {
    expect(
      prepareApproval({ ...draft, approverLogin: 'Li.Wei@corp.example' }, 'li.wei@corp.example'),
    ).toMatchObject({
      ok: false,
      problems: { approver: { code: 'self-approval' } },
    });
  });
});
