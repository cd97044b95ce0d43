import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields every log line carries while one piece of work runs: the Slack request's id while a
 * request is handled (through everything its listeners call, after the ack too), the approval's
 * number while an approval is started, checked or announced. The logger reads them in its
 * `mixin`, so a line written deep inside shared code is still traceable without each call site
 * passing ids along. Follow one approval with `grep '"djbh":"…"'`, one request with its
 * `requestId`.
 */
export interface LogFields {
  requestId?: string;
  djbh?: string;
}

const storage = new AsyncLocalStorage<LogFields>();

/** Runs `work` with `fields` added to the fields of the work it runs inside. */
export function withLogContext<T>(fields: LogFields, work: () => T): T {
  return storage.run({ ...storage.getStore(), ...fields }, work);
}

/**
 * Runs background work (a delivery, a status check) with `fields` alone: a loop woken from inside
 * a request must not stamp that request's id on everything it does afterwards.
 */
export function startLogContext<T>(fields: LogFields, work: () => T): T {
  return storage.run({ ...fields }, work);
}

/**
 * Adds a field to the current context from here on, for the rest of this piece of work: how a
 * request learns its approval's number once the service has answered it.
 */
export function addLogField<K extends keyof LogFields>(key: K, value: LogFields[K]): void {
  const store = storage.getStore();
  if (store) store[key] = value;
}

/** The current fields, for the logger's mixin; an empty object outside any context. */
export function currentLogFields(): LogFields {
  return storage.getStore() ?? {};
}
