import { lookup as dnsLookup } from "node:dns/promises";

/**
 * The name lookups of the domain proxies, bounded so that a command cannot stall the host's own.
 *
 * Node's `dns.lookup` is the system's `getaddrinfo` (so `/etc/hosts` and nsswitch are honoured,
 * as for every other program of the host), run on libuv's thread pool: four threads by default,
 * shared with every file system call of the host process. A call there cannot be cancelled: it
 * holds its thread until the system's resolver gives up, which for a name whose server never
 * answers is many seconds. Unbounded, a command asking for a few dozen such names filled the pool
 * for the next half minute, after the command had ended. So:
 * - all proxies of a process together run at most {@link LookupSlots}' size (two) lookups at once,
 *   which leaves the rest of the pool to the host; the others wait their turn;
 * - a command (one proxy) has at most `maxPending` names waiting or being looked up; one more
 *   is refused at once (`TOO_MANY_LOOKUPS`); asking again for a name already pending shares it;
 * - a lookup not answered within `timeoutMs` fails (`LOOKUP_TIMEOUT`) for the command, and one
 *   still waiting for a slot when the command ends is dropped (`PROXY_CLOSED`) without running.
 * A lookup already running is abandoned, not stopped: it keeps its slot until the system answers.
 */

/** Why a bounded lookup failed without an answer from the resolver. */
export type LookupRefusal = "TOO_MANY_LOOKUPS" | "LOOKUP_TIMEOUT" | "PROXY_CLOSED";

/** Resolves a host name to its addresses. */
export type HostLookup = (host: string) => Promise<string[]>;

/** A fixed number of lookups allowed to run at once, shared by every proxy that holds it. */
export class LookupSlots {
  #free: number;
  readonly #waiting = new Set<() => void>();

  constructor(size: number) {
    this.#free = size;
  }

  /**
   * Run `task` once a slot is free, holding the slot until the task settles whatever happens to
   * its caller; rejected with `PROXY_CLOSED` if `signal` aborts while it still waits.
   */
  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#free === 0) {
      await new Promise<void>((resolve, reject) => {
        const take = () => {
          signal.removeEventListener("abort", drop);
          resolve();
        };
        const drop = () => {
          this.#waiting.delete(take);
          reject(refused("PROXY_CLOSED", "the command ended before the name was looked up"));
        };
        if (signal.aborted) return drop();
        this.#waiting.add(take);
        signal.addEventListener("abort", drop, { once: true });
      });
    } else {
      if (signal.aborted) throw refused("PROXY_CLOSED", "the command ended");
      this.#free -= 1;
    }
    const running = task();
    const release = () => {
      const next = this.#waiting.values().next();
      if (next.done) this.#free += 1;
      else {
        // The slot passes straight to the next waiter.
        this.#waiting.delete(next.value);
        next.value();
      }
    };
    running.then(release, release);
    return running;
  }
}

let sharedSlots: LookupSlots | undefined;

/** The slots every proxy of this process shares (two of libuv's four threads). */
function sharedLookupSlots(): LookupSlots {
  sharedSlots ??= new LookupSlots(2);
  return sharedSlots;
}

/** Node's `dns.lookup`, every address in the system's order. */
export const systemLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address }) => address);

/** Options of {@link createProxyLookups}. */
export interface ProxyLookupsOptions {
  /** @default {@link systemLookup} */
  lookup?: HostLookup;
  /** @default {@link sharedLookupSlots} */
  slots?: LookupSlots;
  /** The most names one proxy has waiting or being looked up at once. @default 8 */
  maxPending?: number;
  /** How long a command waits for one name, from when it asks. @default 10_000 */
  timeoutMs?: number;
}

/** One proxy's lookups: `lookup` bounded as the module's comment says, `close` when its command ends. */
export interface ProxyLookups {
  lookup: HostLookup;
  close(): void;
}

/** The bounded lookups of one proxy, over the process's shared slots. */
export function createProxyLookups({
  lookup = systemLookup,
  slots = sharedLookupSlots(),
  maxPending = 8,
  timeoutMs = 10_000,
}: ProxyLookupsOptions = {}): ProxyLookups {
  const closed = new AbortController();
  const pending = new Map<string, Promise<string[]>>();
  return {
    lookup(host) {
      const shared = pending.get(host);
      if (shared !== undefined) return shared;
      if (closed.signal.aborted) {
        return Promise.reject(refused("PROXY_CLOSED", "the command ended"));
      }
      if (pending.size >= maxPending) {
        return Promise.reject(
          refused(
            "TOO_MANY_LOOKUPS",
            `${maxPending} names are being looked up for this command already`,
          ),
        );
      }
      const answer = new Promise<string[]>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(refused("LOOKUP_TIMEOUT", `no answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
        timer.unref();
        slots
          .run(() => lookup(host), closed.signal)
          .then(
            (addresses) => {
              clearTimeout(timer);
              resolve(addresses);
            },
            (error: unknown) => {
              clearTimeout(timer);
              reject(error);
            },
          );
      }).finally(() => {
        pending.delete(host);
      });
      pending.set(host, answer);
      return answer;
    },
    close() {
      closed.abort();
    },
  };
}

function refused(code: LookupRefusal, message: string): Error {
  return Object.assign(new Error(message), { code });
}
