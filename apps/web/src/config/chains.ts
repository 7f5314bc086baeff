import { defineChain, type Chain } from "viem";
import { chainConfig } from "viem/op-stack";

import { MULTICALL3_ADDRESS as MULTICALL3 } from "@avn/protocol/constants";
import type { NetworkConfig } from "@avn/protocol/network-config";

export interface AppChains {
  l1: Chain;
  /** The L2 as viem's op-stack actions need it: its L1 contracts keyed by the L1 chain id. */
  l2: Chain;
}

const explorer = (name: string, url: string | undefined) => (url === undefined ? undefined : { default: { name, url } });

/** viem chain definitions built from the deployment's configuration (never from constants). */
export function appChains(config: NetworkConfig): AppChains {
  const l1 = defineChain({
    id: config.l1.chainId,
    name: config.l1.name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.l1.rpcUrl] } },
    blockExplorers: explorer(`${config.l1.name} explorer`, config.l1.explorerUrl),
    // `waitToProve` reads through multicall3.
    contracts: { multicall3: { address: MULTICALL3 } },
    testnet: true,
  });
  const l1Id = config.l1.chainId;
  const l2 = defineChain({
    ...chainConfig,
    id: config.l2.chainId,
    name: config.l2.name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: {
      default: { http: [config.l2.rpcUrl], webSocket: config.l2.wsUrl === undefined ? undefined : [config.l2.wsUrl] },
    },
    blockExplorers: explorer(`${config.l2.name} explorer`, config.l2.explorerUrl),
    sourceId: l1Id,
    contracts: {
      ...chainConfig.contracts,
      multicall3: { address: MULTICALL3 },
      portal: { [l1Id]: { address: config.contracts.l1.OptimismPortal } },
      l2OutputOracle: { [l1Id]: { address: config.contracts.l1.L2OutputOracle } },
      l1StandardBridge: { [l1Id]: { address: config.contracts.l1.L1StandardBridge } },
    },
    testnet: true,
  });
  return { l1, l2 };
}
