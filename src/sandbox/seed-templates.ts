import type { TemplateDraft, TemplateStore } from '../approvals/request-templates.ts';
import type { Workspace } from './workspace.ts';

/**
 * The templates #general starts with, so the form's template picker can be tried at once: one
 * whose default approver is away (Olivia Brown, on vacation), one with an approver who is there,
 * one in two steps (the nearest leader, then the one above), and a Chinese one without an
 * approver (the form's suggestion stays). Added by sandbox people, as
 * `/approve templates` would record them.
 */
export async function seedTemplates(
  templates: TemplateStore,
  workspace: Pick<Workspace, 'channelByName' | 'userByLogin'>,
  now = new Date(),
): Promise<void> {
  const general = workspace.channelByName('general').id;
  // Only into a channel that never had templates: on a database kept across restarts, what people
  // removed or renamed stays so, and nothing is added twice.
  if ((await templates.history(general, 1)).length > 0) return;
  const person = (login: string) => workspace.userByLogin(login).id;
  const seeds: Array<{ by: string; draft: TemplateDraft }> = [
    {
      by: 'maria.lopez@corp.example',
      draft: {
        name: 'Access request',
        titlePrefix: '[Access]',
        noteSkeleton: 'System:\nAccess needed (read / write / admin):\nUntil:\nWhy:',
        approverChatId: person('olivia.brown@corp.example'),
      },
    },
    {
      by: 'sam.taylor@corp.example',
      draft: {
        name: 'Purchase',
        titlePrefix: '[Purchase]',
        noteSkeleton: 'Item:\nSupplier:\nCost (incl. tax):\nBudget line:\nWhy now:',
        approverChatId: person('chen.hao@corp.example'),
      },
    },
    {
      // Two steps: the form's approver (the requester's nearest leader), then the leader above
      // them, started once the first approves (approvals/steps.ts).
      by: 'chen.hao@corp.example',
      draft: {
        name: 'Equipment (two steps)',
        titlePrefix: '[Equipment]',
        noteSkeleton: 'Item:\nCost:\nWhy:',
        approverChatId: null,
        laterSteps: [{ kind: 'leader', level: 'second' }],
      },
    },
    {
      by: 'li.wei@corp.example',
      draft: {
        name: '请假',
        titlePrefix: '【请假】',
        noteSkeleton: '请假类型（年假 / 病假 / 事假）：\n开始日期：\n结束日期：\n工作交接：',
        approverChatId: null,
      },
    },
  ];
  for (const { by, draft } of seeds) await templates.add(general, draft, person(by), now);
}
