// What every generated method returns: a promise of the answer's body, as callers have always awaited, that
// also gives the status and the declared headers when asked (openai-node's `.withResponse()`).

/** One 2xx answer of an operation, as `withResponse()` resolves with it: its members are the contract's. */
export interface Answered<Status extends number = number, Data = unknown, DeclaredHeaders extends object = object> {
  /** A 2xx status the operation declares: checking it narrows `data` and `headers`. */
  readonly status: Status;
  /** The body, read by its Content-Type (JSON, bytes as a Uint8Array, text); undefined for a status without one. */
  readonly data: Data;
  /** The headers this status declares, under their declared names, as present on the answer. */
  readonly headers: DeclaredHeaders;
  /** fetch's Response, its body already read: every header, declared or not. */
  readonly response: Response;
}

/**
 * Resolves with the body, like a plain Promise; `withResponse()` resolves with the whole Answered. Both
 * read the one request, sent once when the method is called. A Promise subclass so that a caller's
 * `Promise<Pet>` still takes it; `then` is what `await`, `catch` and `finally` go through.
 */
export class CallPromise<Result extends Answered> extends Promise<Result['data']> {
  // catch and finally build their promises with this constructor, which takes no executor.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  readonly #answered: () => Promise<Result>;
  readonly #data: () => Promise<Result['data']>;

  /** `data` and `answered` are asked only when awaited, so a call awaited one way has no other promise left to reject. */
  constructor(data: () => Promise<Result['data']>, answered: () => Promise<Result>) {
    super((resolve) => {
      resolve(undefined);
    });
    this.#data = data;
    this.#answered = answered;
  }

  override then<Fulfilled = Result['data'], Rejected = never>(
    onfulfilled?: ((value: Result['data']) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onrejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    return this.#data().then(onfulfilled, onrejected);
  }

  /** The status, the declared headers and the body of the answer: a union over the declared 2xx statuses. */
  withResponse(): Promise<Result> {
    return this.#answered();
  }
}
