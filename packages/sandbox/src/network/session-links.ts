import type net from "node:net";
import { type CommandProxy, startCommandProxy } from "./command-proxy.js";
import type { DomainRules } from "./domain-rules.js";
import { SANDBOX_PROXY_FOLDER, sessionForwarder } from "./proxy-forwarder.js";
import {
  type PortPublisher,
  SANDBOX_PUBLISH_FOLDER,
  startPortPublisher,
} from "./published-ports.js";

/** Refusal lines of the proxy a session sandbox keeps for its commands' notes, the newest. */
const KEPT_REFUSALS = 100;

/** A program a session sandbox's server runs beside its commands: `/bin/bash -c` and its environment. */
export interface SessionForwarder {
  command: string;
  env: Record<string, string>;
}

/**
 * What links a session sandbox with the host's network for its life: the domain proxy its
 * commands reach the network through (with network rules), and the publisher of its jobs' ports
 * on the host's loopback (with `publish`). Each has a host folder bound read-only in the sandbox
 * and a forwarder the sandbox's server runs there; both end with the sandbox.
 */
export class SessionLinks {
  #proxy: CommandProxy | undefined;
  #publisher: PortPublisher | undefined;
  /** The proxy's newest refusal lines, and how many it made in all. */
  readonly #refusals: string[] = [];
  #refusalCount = 0;

  /** Start what `rules` and `publish` ask for; `close` ends what started, also when this throws. */
  async start({ rules, publish }: { rules?: DomainRules; publish?: boolean }): Promise<void> {
    if (rules !== undefined) {
      this.#proxy = await startCommandProxy(rules, "bubblewrap", {
        onRefusal: (line) => {
          this.#refusalCount += 1;
          this.#refusals.push(line);
          if (this.#refusals.length > KEPT_REFUSALS) this.#refusals.shift();
        },
      });
    }
    if (publish === true) this.#publisher = await startPortPublisher();
  }

  /** bubblewrap's arguments that bind the host folders of what started. */
  bindArguments(): string[] {
    const proxyFolder = this.#proxy?.network.socketFolder;
    return [
      ...(proxyFolder === undefined ? [] : ["--ro-bind", proxyFolder, SANDBOX_PROXY_FOLDER]),
      ...(this.#publisher === undefined
        ? []
        : ["--ro-bind", this.#publisher.folder, SANDBOX_PUBLISH_FOLDER]),
    ];
  }

  /** The forwarders to run in the sandbox once its server is up; each prints `ready`. */
  forwarders(): SessionForwarder[] {
    return [
      ...(this.#proxy === undefined ? [] : [sessionForwarder()]),
      ...(this.#publisher === undefined ? [] : [this.#publisher.forwarder]),
    ];
  }

  /** How many refusals the proxy made so far: a mark for {@link refusalsSince}. */
  get refusalCount(): number {
    return this.#refusalCount;
  }

  /** The refusal lines the proxy made since `mark` ({@link refusalCount} then), each once. */
  refusalsSince(mark: number): string[] {
    const count = Math.min(this.#refusalCount - mark, this.#refusals.length);
    return count <= 0 ? [] : [...new Set(this.#refusals.slice(-count))];
  }

  /** Relay a host client to `port` on the sandbox's loopback; closed without a publisher. */
  publish(port: number, client: net.Socket): void {
    if (this.#publisher === undefined) client.destroy();
    else this.#publisher.connect(port, client);
  }

  /** End the proxy and the publisher, cutting every connection through them. */
  async close(): Promise<void> {
    await Promise.all([this.#proxy?.close(), this.#publisher?.close()]);
  }
}
