import { useSwitchChain } from "wagmi";

import { useAppSettings } from "../app-context";
import { describeError } from "../lib/errors";

/**
 * Stands in for an action's button while the wallet is on another chain: asks the wallet to switch to
 * `chainId` (a wallet that does not know the chain gets the add-network request, EIP-3085). `disabled`
 * while the action's own request is still in the wallet or pending.
 */
export function SwitchChainButton({
  chainId,
  variant = "primary",
  disabled = false,
}: {
  chainId: number;
  variant?: "primary" | "secondary";
  disabled?: boolean;
}) {
  const { chains } = useAppSettings();
  const switcher = useSwitchChain();
  const chainName = [chains.l1, chains.l2].find((chain) => chain.id === chainId)?.name ?? `chain ${chainId}`;
  return (
    <>
      <button type="button" className={variant} disabled={disabled || switcher.isPending} onClick={() => switcher.switchChain({ chainId })}>
        Switch to {chainName}
      </button>
      {switcher.error !== null && (
        <p className="error" role="alert">
          {describeError(switcher.error)}
        </p>
      )}
    </>
  );
}
