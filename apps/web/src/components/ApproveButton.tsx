import type { Address } from "viem";
import { useConfig } from "wagmi";

import { useAppSettings } from "../app-context";
import { primaryTokenAbi } from "../generated/abis";
import { formatAmount } from "../lib/format";
import { simulateAndWrite } from "../lib/transactions";
import { TxButton } from "./TxButton";

/**
 * Step one of a pay-in-primary-token action: approves `spender` for exactly `amount` (not an unlimited
 * allowance, so a compromised spender can take no more than this purchase). Always shown, disabled when
 * the allowance already covers the amount, so the two steps stay in place as the user goes through them.
 */
export function ApproveButton({
  spender,
  amount,
  allowance,
}: {
  spender: Address;
  amount: bigint | undefined;
  allowance: bigint | undefined;
}) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const covered = amount !== undefined && allowance !== undefined && allowance >= amount;
  return (
    <TxButton
      chainId={chains.l2.id}
      variant="secondary"
      disabled={amount === undefined || amount === 0n || allowance === undefined || covered}
      disabledReason={
        covered
          ? `Your allowance (${formatAmount(allowance)}) already covers this amount.`
          : amount === undefined
            ? "Enter an amount first."
            : undefined
      }
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: config.contracts.l2.PrimaryToken,
          abi: primaryTokenAbi,
          functionName: "approve",
          args: [spender, amount!],
          chainId: chains.l2.id,
        })
      }
    >
      Approve
    </TxButton>
  );
}
