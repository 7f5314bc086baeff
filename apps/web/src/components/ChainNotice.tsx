import { useConnection, useSwitchChain } from "wagmi";

import { useAppSettings } from "../app-context";
import { describeError } from "../lib/errors";

/**
 * Says when the wallet is on a chain the page does not act on, and offers to switch. Switching to a
 * chain the wallet does not know sends the add-network request (EIP-3085) with the deployment's RPC URL.
 */
export function ChainNotice({ expected }: { expected: "l1" | "l2" | "either" }) {
  const { status, chainId } = useConnection();
  const { chains } = useAppSettings();
  const switcher = useSwitchChain();
  if (status !== "connected") return null;
  const wanted = expected === "either" ? [chains.l1, chains.l2] : [chains[expected]];
  if (wanted.some((chain) => chain.id === chainId)) return null;
  return (
    <div className="notice" role="alert" data-testid="wrong-network">
      <p>
        Your wallet is on chain {chainId}. This page acts on {wanted.map((chain) => `${chain.name} (chain ${chain.id})`).join(" and ")}.
      </p>
      {wanted.map((chain) => (
        <button type="button" key={chain.id} disabled={switcher.isPending} onClick={() => switcher.switchChain({ chainId: chain.id })}>
          Switch to {chain.name}
        </button>
      ))}
      {switcher.error !== null && <p className="error">{describeError(switcher.error)}</p>}
    </div>
  );
}
