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
