import type { KnownBlock } from '@slack/types';
import type { Messages } from '../i18n.ts';
import { ACTION } from '../ids.ts';

/** What App Home shows of the person's delegate while away; absent for someone without a login. */
export interface HomeDelegation {
  /** Their delegation in force: who (a mention, or the login) and until when; null when none. */
  active: { delegate: string; until: Date } | null;
  /** How many approvals wait for them now: those stay with them whatever the delegation says. */
  waiting: number;
  timeZone: string | undefined;
}

/**
 * "While I am away": set a delegate, or see who gets new requests until when and that what
 * already waits stays (the service decides who may decide it), with Change and Clear.
 */
export function delegationSection(d: HomeDelegation, t: Messages): KnownBlock[] {
  const header: KnownBlock[] = [
    { type: 'divider' },
    { type: 'header', text: { type: 'plain_text', text: t.homeDelegateHeader } },
  ];
  if (!d.active) {
    return [
      ...header,
      {
        type: 'section',
        block_id: 'delegate_none',
        text: { type: 'mrkdwn', text: t.homeDelegateNone },
        accessory: button(ACTION.delegateOpen, t.delegateSet),
      },
    ];
  }
  return [
    ...header,
    {
      type: 'section',
      block_id: 'delegate_active',
      text: {
        type: 'mrkdwn',
        text: t.homeDelegateActive(d.active.delegate, d.active.until, d.timeZone, d.waiting),
      },
    },
    {
      type: 'actions',
      block_id: 'delegate_actions',
      elements: [
        button(ACTION.delegateOpen, t.delegateChange),
        { ...button(ACTION.delegateClear, t.delegateClear), style: 'danger' },
      ],
    },
  ];
}

function button(actionId: string, text: string) {
  return {
    type: 'button' as const,
    action_id: actionId,
    text: { type: 'plain_text' as const, text },
  };
}
