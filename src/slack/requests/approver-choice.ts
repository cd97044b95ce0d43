import type { ModalMetadata } from '../blocks/approval-modal.ts';
import type { Messages } from '../i18n.ts';
import { BLOCK } from '../ids.ts';
import type { SlackDeps } from '../slack-deps.ts';

/** The approver's service login, from the person picked in Slack or else the login typed in. */
export async function resolveApprover(
  deps: Pick<SlackDeps, 'people' | 'identities'>,
  slackId: string | undefined,
  typedLogin: string | undefined,
  metadata: ModalMetadata,
  t: Messages,
): Promise<{ login?: string; slackId?: string } | { error: string; block: string }> {
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
