import type { Logger } from "pino";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import type { NodeMetrics } from "./health.ts";
import { jobsToAnswerAgain } from "./skipped-votes.ts";
import type { NodeStateStore } from "./state-store.ts";
import type { TxSenderOptions } from "./tx-sender.ts";

export interface LostVotesOptions {
  journal: NodeStateStore;
  /** The registry on the L2 provider in use now (to read a receipt's `SubmissionIgnored` logs). */
  registry: () => VerificationRegistry;
  burner: string;
  metrics: NodeMetrics;
  logger: Logger;
  /** Runs the next job pass now, so the rescan does not wait for the poll. */
  wakeJobLoop: () => void;
}

/**
 * The sender's callbacks that bring lost votes back: a reverted, dropped or refused transaction (a commit,
 * or the reveal of a commitment, whose votes are the commit's), and a mined one whose submissions the registry skipped for a reason the node can overcome (a license voted
 * meanwhile elsewhere, or left), have their votes forgotten and a rescan from their earliest job block
 * recorded in the journal; the next pass answers those jobs again if still open.
 */
export function lostVotesCallbacks(options: LostVotesOptions): Pick<TxSenderOptions, "onVotesLost" | "onMined" | "onReverted"> {
  const { journal } = options;
  const logger = options.logger.child({ component: "lost-votes" });
  const rescanFrom = (block: number | undefined) => {
    if (block !== undefined) journal.requestRescan(block);
    options.wakeJobLoop();
  };
  return {
    onVotesLost: rescanFrom,
    onMined: (tx, receipt) => {
      if (tx.kind !== "submitResults" && tx.kind !== "revealResults") return;
      const skipped = jobsToAnswerAgain(receipt, options.registry(), options.burner);
      if (skipped.length === 0) return;
      logger.info(
        { txId: tx.id, jobs: skipped.map(String) },
        "jobs skipped: a license voted meanwhile elsewhere or left this node; answering again with the others",
      );
      rescanFrom(journal.forgetSkippedVotes(tx.id, skipped));
    },
    onReverted: (tx) => {
      options.metrics.transactions.inc({ kind: tx.kind, outcome: "reverted" });
      logger.error({ txId: tx.id, txKind: tx.kind }, "transaction reverted; its votes will be sent again if their jobs are still open");
    },
  };
}
