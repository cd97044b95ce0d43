import { type Harness, waitFor } from './harness.ts';

// Delegates while away as a person sets them, on App Home, through the app's HTTP endpoint with
// signed requests.

export async function openHome(hh: Harness, login: string) {
  const before = hh.workspace.callsOf('views.publish').length;
  const user = hh.user(login);
  await hh.slack.event({ type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home' });
  await waitFor(() => hh.workspace.callsOf('views.publish').length > before, 5000, 'Home');
  return hh.workspace.homes.get(user);
}

/** Presses a Home button and waits until Home is published again. */
export async function pressOnHome(hh: Harness, login: string, actionId: string) {
  const before = hh.workspace.callsOf('views.publish').length;
  await hh.slack.blockAction(hh.user(login), { action_id: actionId });
  await waitFor(() => hh.workspace.callsOf('views.publish').length > before, 5000, 'Home again');
  return hh.workspace.homes.get(hh.user(login));
}

/** Home's "Set a delegate" (or "Change"): the modal it opens. */
export async function openDelegateModal(hh: Harness, login: string) {
  const opens = hh.workspace.callsOf('views.open').length;
  await hh.slack.blockAction(hh.user(login), { action_id: 'delegate_open' });
  await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 5000, 'the modal');
  return waitFor(
    () =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === hh.user(login) && v.view.callback_id === 'delegate_while_away',
      ),
    5000,
    'the delegate modal',
  );
}

/** Home's "Set a delegate", the modal it opens, and its Save with the delegate and the day back. */
export async function setDelegate(
  hh: Harness,
  login: string,
  delegate: string | null,
  until: string,
) {
  const modal = await openDelegateModal(hh, login);
  const published = hh.workspace.callsOf('views.publish').length;
  const { errors } = await hh.slack.submitView(modal.id, {
    ...(delegate ? { delegate_to_select: hh.user(delegate) } : {}),
    delegate_until_pick: until,
  });
  if (errors) {
    hh.workspace.closeView(modal.id);
    return { errors };
  }
  await waitFor(
    () => hh.workspace.callsOf('views.publish').length > published,
    5000,
    'Home after Save',
  );
  return { errors, home: hh.workspace.homes.get(hh.user(login)) };
}
