/**
 * What `work` settles to if it does so within `ms`, else undefined; the work goes on either way
 * (a late result can still warm a cache). It rejects when the work rejects in time. For answers
 * that must go out within Slack's 3 s, where a slow call may cost detail but never the answer.
 */
export async function settleWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
