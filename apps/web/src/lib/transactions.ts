import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import type { Hash, TransactionReceipt } from "viem";
import { useConfig, type Config } from "wagmi";
import { simulateContract, waitForTransactionReceipt, writeContract, type SimulateContractParameters } from "wagmi/actions";

import { describeError } from "./errors";

/** Where one transaction of a button stands. */
export type TxState =
  | { status: "idle" }
  | { status: "signing" }
  | { status: "pending"; hash: Hash }
  | { status: "mined"; hash: Hash; receipt: TransactionReceipt }
  | { status: "failed"; message: string; hash?: Hash };

/**
 * Simulates a contract call first, so a call that would revert fails here with its custom error decoded
 * from the ABI (a wallet's own estimate would give only a hex revert), then asks the wallet to sign it.
 */
export async function simulateAndWrite(config: Config, parameters: SimulateContractParameters): Promise<Hash> {
  // The parameters are checked against the ABI where the caller builds them; here they pass through.
  const { request } = await simulateContract(config, parameters as never);
  return writeContract(config, request as never);
}

/**
 * Runs one transaction through signing, pending and mined or failed, and refreshes every chain read of
 * the page once it is mined (balances, lists and statuses all follow from the new state).
 */
export function useTransaction() {
  const config = useConfig();
  const queryClient = useQueryClient();
  const [state, setState] = useState<TxState>({ status: "idle" });
  // Counts the sends started, so that an observer (a test, a screen reader script) can tell a new
  // outcome from the previous one when both read the same ("Mined in block …").
  const [attempts, setAttempts] = useState(0);

  const run = useCallback(
    async (
      chainId: number,
      send: () => Promise<Hash>,
      onMined?: (receipt: TransactionReceipt) => void,
    ): Promise<TransactionReceipt | undefined> => {
      setState({ status: "signing" });
      setAttempts((count) => count + 1);
      let hash: Hash | undefined;
      try {
        hash = await send();
        setState({ status: "pending", hash });
        const receipt = await waitForTransactionReceipt(config, { hash, chainId });
        if (receipt.status !== "success") {
          setState({ status: "failed", hash, message: "The transaction was mined but reverted." });
          return undefined;
        }
        setState({ status: "mined", hash, receipt });
        // Before the reads refresh: what the caller does on success (remember an approval, say what
        // happened) must not race the re-rendering that fresh reads cause.
        onMined?.(receipt);
        await queryClient.invalidateQueries();
        return receipt;
      } catch (error) {
        // The page shows the short reason; the console keeps the whole error (the node's answer, the
        // request's fields) for whoever needs to know why, a developer or a browser test.
        console.error(`transaction failed: ${error instanceof Error ? error.message : String(error)}`);
        setState({ status: "failed", hash, message: describeError(error) });
        return undefined;
      }
    },
    [config, queryClient],
  );
  const reset = useCallback(() => setState({ status: "idle" }), []);
  return { state, attempts, run, reset };
}
