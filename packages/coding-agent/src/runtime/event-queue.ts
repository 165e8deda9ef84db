/** The events of a run, buffered until read. */
interface EventQueue<Event> {
  push(event: Event): void;
  close(): void;
  /** Read the events in order; ends when closed, rejecting when `result` did. */
  iterate(result: Promise<unknown>): AsyncIterator<Event>;
}

/** An unbounded queue: events are kept until read, so a run never waits for its reader. */
export function createEventQueue<Event>(): EventQueue<Event> {
  const buffered: Event[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  return {
    push(event) {
      buffered.push(event);
      wake?.();
    },
    close() {
      closed = true;
      wake?.();
    },
    iterate(result) {
      let index = 0;
      return {
        async next(): Promise<IteratorResult<Event>> {
          while (index >= buffered.length) {
            if (closed) {
              // A run that failed outright rejects here rather than ending quietly.
              await result;
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
          }
          const event = buffered[index] as Event;
          index += 1;
          return { done: false, value: event };
        },
      };
    },
  };
}
