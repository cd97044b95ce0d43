import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApprovalServiceClient } from '../../src/approval-service/approval-service-client.ts';
import { SuggestionTimeout, suggestApproverFor } from '../../src/approvals/approver-suggestion.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';

// The suggestion against the simulator over HTTP; "who is in the chat" is a small table here.

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ port: 0 });
});
afterAll(() => sim.close());
beforeEach(() => sim.clearFaults());

const service = () =>
  createApprovalServiceClient({
    baseUrl: sim.url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
  });
const inChat = (logins: Record<string, string>) => async (login: string) => logins[login] ?? null;

describe('suggestApproverFor', () => {
  it('suggests the nearest leader with their chat account and the department chain', async () => {
    const suggestion = await suggestApproverFor(
      { service: service(), findChatUser: inChat({ 'maria.lopez@corp.example': 'U2' }) },
      'sam.taylor@corp.example',
    );
    expect(suggestion).toEqual({
      kind: 'suggested',
      chain: ['Cloud Platform 云平台', 'Infrastructure 基础架构部', 'Storage 存储组'],
      approverLogin: 'maria.lopez@corp.example',
      approverChatId: 'U2',
    });
  });

  it('gives up after its deadline, so the person is not left waiting on the retries', async () => {
    sim.setFaults('department', { latencyMs: 1000 });
    const started = Date.now();
    const suggestion = await suggestApproverFor(
      { service: service(), findChatUser: inChat({}), deadlineMs: 100 },
      'sam.taylor@corp.example',
    );
    expect(suggestion.kind).toBe('lookup-failed');
    expect(suggestion.kind === 'lookup-failed' && suggestion.error).toBeInstanceOf(
      SuggestionTimeout,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reports a failed lookup as a kind of suggestion, never as an error', async () => {
    sim.setFaults('department', { html502: true });
    expect(
      (
        await suggestApproverFor(
          { service: service(), findChatUser: inChat({}) },
          'sam.taylor@corp.example',
        )
      ).kind,
    ).toBe('lookup-failed');
  });
});
