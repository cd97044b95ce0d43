import { describe, expect, it } from 'vitest';
import type { Department, StartApprovalInput } from '../../src/approvals/approval-types.ts';
import { UnknownApproverError } from '../../src/approvals/service-directory.ts';
import { startTrackedApproval } from '../../src/approvals/start-approval.ts';

const input: StartApprovalInput = {
  requester: 'sam.taylor@corp.example',
  approver: 'sam@personal.example',
  title: 'T',
  note: 'n',
};

function deps(known: boolean) {
  const started: StartApprovalInput[] = [];
  const stored: string[] = [];
  return {
    started,
    stored,
    deps: {
      service: {
        async getDepartment(login: string): Promise<Department> {
          return {
            login,
            name: known ? 'Sam T' : (login.split('@')[0] ?? login),
            mobile: '',
            productLine: '',
            department: '',
            subDepartment: '',
            leaders: { subDepartment: '', department: '', productLine: '' },
          };
        },
        async startApproval(i: StartApprovalInput) {
          started.push(i);
          return { djbh: 'AbCdEfGhIj1' };
        },
      },
      store: {
        async createApproval(a: { djbh: string }) {
          stored.push(a.djbh);
        },
      },
      now: () => new Date(0),
    },
  };
}

const request = {
  input,
  teamId: 'T1',
  channelId: 'C1',
  requesterSlackId: 'U1',
  approverSlackId: null,
  locale: 'en-US',
};

describe('startTrackedApproval', () => {
  it('never sends the service an approver its directory does not know, whichever entry point asks', async () => {
    const run = deps(false);
    await expect(startTrackedApproval(run.deps, request)).rejects.toBeInstanceOf(
      UnknownApproverError,
    );
    expect(run.started).toEqual([]);
    expect(run.stored).toEqual([]);
  });

  it('starts and records an approval for an approver the service knows', async () => {
    const run = deps(true);
    await expect(startTrackedApproval(run.deps, request)).resolves.toEqual({ djbh: 'AbCdEfGhIj1' });
    expect(run.started).toEqual([input]);
    expect(run.stored).toEqual(['AbCdEfGhIj1']);
  });
});
