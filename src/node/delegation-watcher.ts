import type { Logger } from "pino";

import { describeError } from "../common/describe-error.ts";
import type { ProtocolContracts } from "./contracts.ts";
import type { NodeMetrics } from "./health.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { delegationInstructions, readDelegationStatus, type DelegationStatus } from "./licenses.ts";

// Before any delegation: checked often, so a node starts voting soon after its owner delegates.
const DELEGATION_CHECK_MS = 5_000;
// The instructions are repeated, not printed on every check, so they stay readable in the log.
const INSTRUCTIONS_EVERY_MS = 60_000;

export interface DelegationWatcherOptions {
  /** The contracts on the L2 provider in use now. */
  contracts: () => Pick<ProtocolContracts, "license" | "nodeRegistry">;
  nodeRegistryAddress: string;
  owners: readonly string[];
  burner: string;
  metrics: NodeMetrics;
  logger: Logger;
}

/**
 * Which licenses this node votes for: those of the allowlisted owners delegated to its burner. Each check
 * (at start, then on every heartbeat tick) logs the licenses gained and lost, then how many it votes for
 * (`delegation checked`); a transferred license voids its delegation on-chain and drops out here. With
 * none, it says what the operator must do.
 */
export class DelegationWatcher {
  readonly #options: DelegationWatcherOptions;
  readonly #logger: Logger;
  #status: DelegationStatus = { delegated: [], undelegated: [] };
  #lastInstructionsAt = 0;

  constructor(options: DelegationWatcherOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: "delegation" });
  }

  /** The licenses to vote for, as of the last check. */
  get delegated(): bigint[] {
    return this.#status.delegated;
  }

  async check(): Promise<void> {
    const { owners, burner, metrics } = this.#options;
    const previous = this.#status.delegated;
    this.#status = await readDelegationStatus(this.#options.contracts(), owners, burner);
    const delegated = this.#status.delegated;
    metrics.delegatedLicenses.set(delegated.length);
    const lost = previous.filter((id) => !delegated.includes(id));
    const gained = delegated.filter((id) => !previous.includes(id));
    if (lost.length > 0)
      this.#logger.warn(
        { licenses: lost.map(String) },
        "licenses no longer delegated to this node (transferred or undelegated): not voting for them",
      );
    if (gained.length > 0) this.#logger.info({ licenses: gained.map(String) }, "voting for licenses");
    if (delegated.length === 0 && Date.now() - this.#lastInstructionsAt >= INSTRUCTIONS_EVERY_MS) {
      this.#lastInstructionsAt = Date.now();
      this.#logger.warn(
        {
          burner,
          nodeRegistry: this.#options.nodeRegistryAddress,
          instructions: delegationInstructions(this.#status, owners, burner, this.#options.nodeRegistryAddress),
        },
        "waiting for delegation",
      );
    }
    // Every check, whatever it found: the operator sees the node re-reading its delegation (every few seconds
    // while it waits, then on each heartbeat tick), and its last word on it.
    this.#logger.info({ delegated: delegated.length }, "delegation checked");
  }

  /** Checks every few seconds until a license is delegated (a failed check moves to the next L2 URL). */
  async waitForDelegation(lifecycle: Lifecycle, onError: () => void): Promise<void> {
    for (;;) {
      await this.check().catch((error: unknown) => {
        this.#logger.warn({ error: describeError(error) }, "delegation check failed");
        onError();
      });
      if (this.delegated.length > 0) return;
      await lifecycle.throwIfStopped();
      await lifecycle.sleep(DELEGATION_CHECK_MS);
    }
  }
}
