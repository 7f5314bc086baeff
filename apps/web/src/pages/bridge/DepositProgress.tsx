import { useQuery } from "@tanstack/react-query";
import { parseEventLogs, type TransactionReceipt } from "viem";
import { getL2TransactionHashes } from "viem/op-stack";
import { useConfig } from "wagmi";
import { waitForTransactionReceipt } from "wagmi/actions";

import { HexLink } from "../../components/ExplorerLink";
import { useAppSettings } from "../../app-context";
import { l2StandardBridgeAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { L2_STANDARD_BRIDGE } from "./shared";

/** How long to wait for a deposit on L2 before saying so: the sequencer normally includes it within a minute or two of L1. */
const ARRIVAL_TIMEOUT_MS = 15 * 60_000;

/**
 * Follows a mined L1 deposit to L2: the portal's `TransactionDeposited` log fixes the hash of the deposit
 * transaction on L2, whose receipt then says whether the bridge released the funds there.
 */
export function DepositProgress({ l1Receipt, description }: { l1Receipt: TransactionReceipt; description: string }) {
  const wagmiConfig = useConfig();
  const { chains } = useAppSettings();
  // A bridge deposit sends exactly one message through the portal.
  const [l2Hash] = getL2TransactionHashes({ logs: l1Receipt.logs });

  const arrival = useQuery({
    queryKey: ["bridge", "deposit-arrival", chains.l2.id, l2Hash],
    enabled: l2Hash !== undefined,
    // The L2 receipt never changes once it exists, and a refetch would only restart the wait.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
    queryFn: async () => {
      const receipt = await waitForTransactionReceipt(wagmiConfig, { chainId: chains.l2.id, hash: l2Hash, timeout: ARRIVAL_TIMEOUT_MS });
      // The deposit transaction succeeds even when the messenger's relay fails (it records the failure
      // instead of reverting), so the bridge's own "finalized" event is what proves the funds arrived.
      const finalized = parseEventLogs({
        abi: l2StandardBridgeAbi,
        logs: receipt.logs,
        eventName: ["ETHBridgeFinalized", "ERC20BridgeFinalized"],
      });
      const released =
        receipt.status === "success" && finalized.some((log) => log.address.toLowerCase() === L2_STANDARD_BRIDGE.toLowerCase());
      return { hash: receipt.transactionHash, released };
    },
  });

  return (
    <div className="panel" role="status" aria-live="polite" data-testid="deposit-progress">
      <h2>Deposit of {description}</h2>
      <p>
        Sent on L1 (tx <HexLink chain="l1" kind="tx" value={l1Receipt.transactionHash} />
        ).
      </p>
      {l2Hash === undefined ? (
        <p className="error">The L1 transaction sent no deposit to L2.</p>
      ) : arrival.isPending ? (
        <p>
          Waiting for L2: the deposit becomes L2 transaction <HexLink chain="l2" kind="tx" value={l2Hash} />. This usually takes under a
          minute.
        </p>
      ) : arrival.isError ? (
        <p className="error">
          Still waiting for L2 transaction <HexLink chain="l2" kind="tx" value={l2Hash} />: {describeError(arrival.error)}
        </p>
      ) : arrival.data.released ? (
        <p className="success">
          Arrived on L2 (tx <HexLink chain="l2" kind="tx" value={arrival.data.hash} />
          ).
        </p>
      ) : (
        <p className="error">
          Failed on L2 (tx <HexLink chain="l2" kind="tx" value={arrival.data.hash} />
          ): the bridge did not release the funds; the message must be replayed with more gas.
        </p>
      )}
    </div>
  );
}
