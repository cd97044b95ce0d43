import type { ViewResponseAction } from '@slack/bolt';
import type { ModalView } from '@slack/types';
import { describe } from '../../errors.ts';
import { settleWithin } from '../../settle-within.ts';

/*
 * Answering within Slack's 3 s: Slack gives up on an ack (or a trigger_id) after 3 s, so a
 * listener whose checks ask Slack or the database gives them a budget, and past it answers
 * "checking…" at once and shows the outcome later in the same place.
 */

/** How long a listener's checks may take before it must answer; Slack gives up at 3 s. */
export const ACK_BUDGET_MS = 2000;

export type Answered<T, I> = { late: false; value: T } | { late: true; value: T; interim: I };

/**
 * `work`'s value if it settles within `budgetMs`; past it, `interim` answers at once and the value
 * follows when the work settles, with what the interim answer opened (to show the value there).
 * `work` should not reject: catch its failure into a value the listener can put into words.
 */
export async function answerWithin<T, I>(
  work: Promise<T>,
  budgetMs: number,
  interim: () => Promise<I>,
): Promise<Answered<T, I>> {
  const early = await settleWithin(
    work.then((value) => ({ value })),
    budgetMs,
  );
  if (early) return { late: false, value: early.value };
  const opened = await interim();
  return { late: true, value: await work, interim: opened };
}

/** A modal's submission, answered once by its ack and afterwards by views.update. */
export interface ModalAnswer {
  /** Whether the ack went out: past it, only views.update can change the modal. */
  readonly acked: boolean;
  /** The ack, with field errors or a new view; only while Slack still waits for it. */
  ack(response?: ViewResponseAction): Promise<void>;
  /** Shows `view`: in the ack while Slack waits for it, else by views.update (a failure logged). */
  show(view: ModalView): Promise<void>;
}

export function modalAnswer(args: {
  ack: (response?: ViewResponseAction) => Promise<void>;
  client: { views: { update(a: { view_id: string; view: ModalView }): Promise<unknown> } };
  viewId: string;
  logger: { warn(obj: object, msg: string): void };
}): ModalAnswer {
  let acked = false;
  const answer: ModalAnswer = {
    get acked() {
      return acked;
    },
    async ack(response) {
      await args.ack(response);
      acked = true;
    },
    async show(view) {
      if (!acked) return answer.ack({ response_action: 'update', view });
      await args.client.views.update({ view_id: args.viewId, view }).then(
        () => undefined,
        (error: unknown) => {
          args.logger.warn(
            { error: describe(error), view: args.viewId },
            'could not update the modal',
          );
        },
      );
    },
  };
  return answer;
}
