import { expect } from 'vitest';
import type { View } from '../../src/sandbox/workspace.ts';
import { type Harness, waitFor } from './harness.ts';

// Templates as a person makes and uses them, through the app's HTTP endpoint with signed requests.

const text = (x: unknown) => JSON.stringify(x ?? {});

/** `/approve templates` in a channel, and the templates modal it opens (once it is filled in). */
export async function openTemplates(hh: Harness, login: string, channel = 'general') {
  const opens = hh.workspace.callsOf('views.open').length;
  const response = await hh.slack.command(hh.user(login), hh.channel(channel), 'templates');
  expect(response.status).toBe(200);
  await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 5000, 'views.open');
  const opened = hh.workspace.callsOf('views.open')[opens]?.response as { view?: { id?: string } };
  return waitFor(
    () => {
      const view = hh.workspace.views.get(opened.view?.id ?? '');
      return view && !text(view.view).includes('hourglass') ? view : undefined;
    },
    5000,
    'the templates modal',
  );
}

/**
 * Adds a template through the templates modal, as `login` in `channel`, and returns its id.
 * `approver` is a Slack user id.
 */
export async function addTemplate(
  hh: Harness,
  login: string,
  fields: {
    name: string;
    prefix?: string;
    skeleton?: string;
    approver?: string;
    /** The steps after the form's approver, one a line. */
    steps?: string;
  },
  channel = 'general',
): Promise<string> {
  const list = await openTemplates(hh, login, channel);
  const hash = hh.workspace.views.get(list.id)?.hash;
  await hh.slack.blockAction(hh.user(login), { action_id: 'template_add' }, { viewId: list.id });
  await waitFor(() => hh.workspace.views.get(list.id)?.hash !== hash, 5000, 'the editor');
  const { errors } = await hh.slack.submitView(list.id, {
    template_name_input: fields.name,
    template_prefix_input: fields.prefix ?? '',
    template_skeleton_input: fields.skeleton ?? '',
    ...(fields.approver ? { template_approver_select: fields.approver } : {}),
    ...(fields.steps ? { template_steps_input: fields.steps } : {}),
  });
  expect(errors).toBeUndefined();
  const saved = hh.workspace.views.get(list.id) as View;
  const section = (
    saved.view.blocks as Array<{ type: string; accessory?: { value?: string } }>
  ).find((b) => b.type === 'section' && text(b).includes(`*${fields.name}*`));
  return section?.accessory?.value ?? '';
}

/**
 * Picks a template in the open request form (with what was `typed` in it so far) and waits for
 * the form to be drawn again.
 */
export async function pickTemplate(
  hh: Harness,
  login: string,
  view: View,
  id: string,
  typed: Record<string, string | undefined> = {},
) {
  const hash = hh.workspace.views.get(view.id)?.hash;
  const response = await hh.slack.selectOption(
    hh.user(login),
    view.id,
    'template_select',
    id,
    typed,
  );
  expect(response.status).toBe(200);
  await waitFor(() => hh.workspace.views.get(view.id)?.hash !== hash, 5000, 'the form refilled');
  return hh.workspace.views.get(view.id) as View;
}
