// A request the server refuses, with the HTTP status and OpenAI's error body:
// { error: { message, type, param, code } }, which OpenAI's clients raise as
// BadRequestError (400), NotFoundError (404) and the like.
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'RequestError';
  }

  /** OpenAI's error body. */
  toJSON(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    const type = this.status >= 500 ? 'server_error' : 'invalid_request_error';
    return { error: { message: this.message, type, param: this.param, code: this.code } };
  }
}
