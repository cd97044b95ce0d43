import { describe, expect, it } from 'vitest';
import { harnessPerTest } from './helpers/harness.ts';

// One approval and one request can be followed through the logs: every line written while a
// Slack request is handled carries its id, every line about an approval carries its number.

const harness = harnessPerTest();

describe('traceable logs', () => {
  it('stamps each request’s lines with its id and each approval’s lines with its djbh', async () => {
    const h = await harness({ env: { LOG_LEVEL: 'debug' } });
    // A first post that fails, so the background delivery has something to say about the approval
    // (one Slack surely did not carry out: after an internal_error the retry would wait a minute).
    h.workspace.failNext('chat.postMessage', 'service_unavailable');
    const { approval } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const lines = h.logs.entries();

    const submission = lines.find((l) => l.msg === 'slack request' && l.kind === 'view_submission');
    const viewId = [...h.workspace.views.keys()].at(-1);
    expect(submission?.requestId).toBe(viewId);
    const command = lines.find((l) => l.msg === 'slack request' && l.kind === '/approve');
    expect(String(command?.requestId)).toMatch(/\S/);
    expect(command?.requestId).not.toBe(viewId);

    const started = lines.find((l) => l.msg === 'approval started');
    expect(started).toMatchObject({ requestId: viewId, djbh: approval.djbh });

    // Every line that mentions the approval anywhere names it in its own field.
    const aboutIt = lines.filter((l) => JSON.stringify(l).includes(approval.djbh));
    expect(aboutIt.length).toBeGreaterThan(2);
    for (const line of aboutIt) expect(line.djbh, JSON.stringify(line)).toBe(approval.djbh);
    // A request's id ends with the request: the decision's check and delivery, after it, are
    // background work and carry no request id (not even that of the request that woke them).
    const closing = lines.indexOf(submission as Record<string, unknown>);
    for (const line of lines.slice(closing + 1).filter((l) => aboutIt.includes(l)))
      expect(line.requestId, JSON.stringify(line)).toBeUndefined();
    expect(lines.slice(closing + 1).filter((l) => aboutIt.includes(l)).length).toBeGreaterThan(0);
    for (const line of lines.filter((l) => l.requestId === viewId))
      expect(lines.indexOf(line)).toBeLessThanOrEqual(closing);
  });
});
