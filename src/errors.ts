/**
 * Base of every error this app throws on purpose. `code` is stable and machine-readable;
 * `message` is for operators and never carries secrets; `cause` keeps the original error.
 */
export class AppError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * Whether `error` is an AppError, also one thrown by another copy of this module: the compiled
 * entry point holds its own copy (scripts/bundle.mjs) and the sandbox, loaded beside it, another.
 */
export function isAppError(error: unknown): error is AppError {
  if (error instanceof AppError) return true;
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'string')
    return false;
  for (let p = Object.getPrototypeOf(error); p; p = Object.getPrototypeOf(p))
    if (p.constructor?.name === 'AppError') return true;
  return false;
}

/**
 * One line for a log: the message and, where there is one, the code (Slack's `data.error`, our
 * `code`), without a stack. For routine failures; genuine bugs are logged with `err` and a stack.
 */
export function describe(error: unknown): { message: string; code?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const platform = (error as { data?: { error?: unknown } }).data?.error;
  const code = typeof platform === 'string' ? platform : (error as { code?: unknown }).code;
  return { message: error.message, ...(typeof code === 'string' ? { code } : {}) };
}
