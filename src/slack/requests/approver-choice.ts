import { checkApprover } from '../../approvals/service-directory.ts';
import type { ModalMetadata } from '../blocks/approval-modal.ts';
import type { Messages } from '../i18n.ts';
import { BLOCK } from '../ids.ts';
import type { SlackDeps } from '../slack-deps.ts';

type Choice = { login?: string; slackId?: string } | { error: string; block: string };

/**
 * The approver's service login, from the person picked in Slack or else the login typed in, once
 * the service's directory is known to have them (an approval for someone it does not know could
 * never be decided); no approver at all is a choice too (the service's default).
 */
export async function resolveApprover(
  deps: Pick<SlackDeps, 'people' | 'identities' | 'service'>,
  slackId: string | undefined,
  typedLogin: string | undefined,
  metadata: ModalMetadata,
  t: Messages,
): Promise<Choice> {
  const choice = await chosen(deps, slackId, typedLogin, metadata, t);
  if ('error' in choice || !choice.login) return choice;
  if ((await checkApprover(deps.service, choice.login)) !== 'unknown') return choice;
  return {
    error: t.approverUnknownToService(choice.login),
    block: choice.slackId ? BLOCK.approver : BLOCK.approverLogin,
  };
}

async function chosen(
  deps: Pick<SlackDeps, 'people' | 'identities'>,
  slackId: string | undefined,
  typedLogin: string | undefined,
  metadata: ModalMetadata,
  t: Messages,
): Promise<Choice> {
  if (!slackId) {
    if (typedLogin && !/^[A-Za-z0-9.\-_@]+$/.test(typedLogin)) {
      return { error: t.approverLoginInvalid, block: BLOCK.approverLogin };
    }
    return typedLogin ? { login: typedLogin } : {};
  }
  if (metadata.suggestion?.slackId === slackId)
    return { login: metadata.suggestion.login, slackId };
  const person = await deps.people.get(slackId);
  if (person.isBot) return { error: t.approverIsBot, block: BLOCK.approver };
  const login = await deps.identities.loginOf(slackId);
  if (!login) return { error: t.approverWithoutEmail, block: BLOCK.approver };
  return { login, slackId };
}
