import { describe, expect, it } from 'vitest';
import type { Department } from '../../src/approvals/approval-types.ts';
import { transition } from '../../src/approvals/lifecycle/transition.ts';
import {
  afterStep,
  type ChainStep,
  laterStepNote,
  parseStepRules,
  ruleApprover,
  skipReason,
} from '../../src/approvals/steps.ts';

const SAM = 'sam@corp.example';
const dept = (sub: string, one: string, syb: string): Department => ({
  login: SAM,
  name: 'Sam',
  mobile: '1',
  productLine: 'P',
  department: 'D',
  subDepartment: 'S',
  leaders: { subDepartment: sub, department: one, productLine: syb },
});
const step = (over: Partial<ChainStep>): ChainStep => ({
  position: 1,
  state: 'decided',
  approverLogin: 'maria@corp.example',
  djbh: 'AAAA00000001',
  decision: 'approved',
  decidedBy: null,
  ...over,
});

describe('a template’s steps as typed', () => {
  it.each([
    [
      'nearest leader\nfinance@corp.example',
      [
        { kind: 'leader', level: 'nearest' },
        { kind: 'person', login: 'finance@corp.example' },
      ],
    ],
    [
      '  Second-level leader \n\n@it@corp.example',
      [
        { kind: 'leader', level: 'second' },
        { kind: 'person', login: 'it@corp.example' },
      ],
    ],
    ['产品线领导', [{ kind: 'leader', level: 'product-line' }]],
    ['', []],
  ])('reads %j', (typed, rules) => {
    expect(parseStepRules(typed)).toEqual({ ok: true, rules });
  });

  it('refuses a line that is neither a login nor a rule, and more than five steps', () => {
    expect(parseStepRules('the boss please')).toEqual({
      ok: false,
      problem: { code: 'not-a-step', line: 'the boss please' },
    });
    expect(parseStepRules('a@x\nb@x\nc@x\nd@x\ne@x\nf@x')).toMatchObject({
      ok: false,
      problem: { code: 'too-many', limit: 5 },
    });
  });
});

describe('a step’s approver', () => {
  it.each([
    ['nearest', dept('maria', 'chen', 'zhou'), 'maria'],
    ['second', dept('maria', 'chen', 'zhou'), 'chen'],
    ['product-line', dept('maria', 'chen', 'zhou'), 'zhou'],
    ['second', dept('', '', ''), undefined],
    // The directory names one leader for every level: asked above the nearest one.
    ['second', dept('maria', 'maria', 'maria'), 'ask-above'],
  ] as const)('%s of %j is %s', (level, department, expected) => {
    expect(ruleApprover({ kind: 'leader', level }, SAM, department)).toBe(expected);
  });

  it('takes the nearest leader’s own leader as second level, never the requester', () => {
    const above = { ...dept('chen', 'chen', 'zhou'), login: 'maria' };
    expect(
      ruleApprover(
        { kind: 'leader', level: 'second' },
        SAM,
        dept('maria', 'maria', 'maria'),
        above,
      ),
    ).toBe('chen');
  });

  it.each([
    [SAM, [], 'requester'],
    ['MARIA@corp.example', [step({})], 'approved-earlier'],
    ['maria@corp.example', [step({ decidedBy: 'tom@corp.example' })], undefined],
    ['tom@corp.example', [step({ decidedBy: 'tom@corp.example' })], 'approved-earlier'],
    ['chen@corp.example', [step({})], undefined],
  ] as const)('%s after %j is skipped: %s', (approver, earlier, reason) => {
    expect(skipReason(approver, SAM, earlier)).toBe(reason);
  });
});

describe('what a step’s outcome means', () => {
  const of = { chainId: 'C', position: 2, steps: 3 };
  it.each([
    ['approved', of, { nextDue: 3, chainEnds: null }],
    ['approved', { ...of, position: 3 }, { nextDue: null, chainEnds: 'approved' }],
    ['rejected', of, { nextDue: null, chainEnds: 'rejected' }],
    ['ended', of, { nextDue: null, chainEnds: 'stopped' }],
    ['gave-up', of, { nextDue: null, chainEnds: 'stopped' }],
  ] as const)('%s at %j', (outcome, s, expected) => {
    expect(afterStep(s, outcome, null)).toMatchObject(expected);
  });

  it('is recorded by the lifecycle’s decided rule with the decision, only for a step of a chain', () => {
    const approval = {
      djbh: 'C',
      slack: { channelId: 'C1', threadTs: null, functionExecutionId: null },
      parties: {
        approver: { login: 'maria@corp.example', slackId: null, term: 0 },
        formerApprovers: [],
      },
    };
    const event = {
      kind: 'decided',
      decision: 'approved',
      decidedBy: null,
      ended: true,
      nextCheckAt: new Date(),
    } as const;
    const at = { now: new Date(), claim: null };
    expect(transition(approval, event, at, {}).chain).toBeUndefined();
    expect(
      transition(approval, event, at, { step: { chainId: 'C', position: 1, steps: 2 } }).chain,
    ).toMatchObject({
      nextDue: 2,
      chainEnds: null,
    });
  });
});

describe('the note of a later step', () => {
  it('names the earlier steps’ decisions and numbers, without ASCII quotes, then the note', () => {
    const note = laterStepNote(
      "Two switches, don't wait",
      [step({ decidedBy: "o'brien@x" }), step({ position: 2, state: 'skipped', djbh: null })],
      'en-US',
      20_000,
    );
    expect(note).toBe(
      "Earlier steps: 1. approved by o’brien@x (AAAA00000001); 2. skipped (maria@corp.example)\n\nTwo switches, don't wait",
    );
  });

  it('cuts the note with a visible mark naming where it is whole, to fit the service’s limit', () => {
    const note = laterStepNote('x'.repeat(5000), [step({})], 'zh-CN', 200);
    expect([...note]).toHaveLength(200);
    expect(note.startsWith('此前各步: 1. maria@corp.example 已同意（AAAA00000001）')).toBe(true);
    expect(note.endsWith('[为符合长度已截断：完整说明见 AAAA00000001]')).toBe(true);
  });
});
