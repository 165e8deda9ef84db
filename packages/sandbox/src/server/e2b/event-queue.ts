/**
 * A queue a producer pushes to and one consumer reads as an async iterable: a running command's
 * events, handed to its RPC stream as they come. `end()` finishes the iteration once what was
 * pushed before it is read; an abort of `signal` finishes it at once.
 */
export interface EventQueue<Event> extends AsyncIterable<Event> {
  push(event: Event): void;
  end(): void;
}

/** An {@link EventQueue}, finished early when `signal` aborts. */
export function createEventQueue<Event>(signal?: AbortSignal): EventQueue<Event> {
  const pending: Event[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const onAbort = () => {
    pending.length = 0;
    ended = true;
    notify();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  return {
    push(event) {
      if (ended) return;
      pending.push(event);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    async *[Symbol.asyncIterator]() {
      try {
        while (true) {
          const next = pending.shift();
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (ended) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}
