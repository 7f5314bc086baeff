import type { Address } from "viem";
import { useConnection, useReadContracts } from "wagmi";

import { useAppSettings } from "../app-context";
import { primaryTokenAbi } from "../generated/abis";

/**
 * The connected wallet's L2 primary-token balance and its allowance to `spender`. Staking and license
 * purchases both pull primary tokens with `transferFrom`, so both pages need the two numbers.
 */
export function usePrimaryFunds(spender: Address): { balance: bigint | undefined; allowance: bigint | undefined } {
  const { config, chains } = useAppSettings();
  const { address: owner } = useConnection();
  const token = { address: config.contracts.l2.PrimaryToken, abi: primaryTokenAbi, chainId: chains.l2.id } as const;
  const reads = useReadContracts({
    contracts: [
      { ...token, functionName: "balanceOf", args: [owner!] },
      { ...token, functionName: "allowance", args: [owner!, spender] },
    ],
    allowFailure: false,
    query: { enabled: owner !== undefined },
  });
  if (owner === undefined || reads.data === undefined) return { balance: undefined, allowance: undefined };
  return { balance: reads.data[0], allowance: reads.data[1] };
}
