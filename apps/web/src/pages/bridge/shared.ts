import {
  type Abi,
  type Address,
  type Chain,
  type ChainContract,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hash,
} from "viem";
import { chainConfig, publicActionsL1, publicActionsL2, walletActionsL1 } from "viem/op-stack";
import type { Config } from "wagmi";
import { getPublicClient, getWalletClient, type SimulateContractParameters } from "wagmi/actions";

import type { AppSettings } from "../../app-context";
import { simulateAndWrite } from "../../lib/transactions";

export type Direction = "deposit" | "withdraw";
export type Asset = "eth" | "token";
/** How a withdrawal goes: the standard bridge (prove and finalize after the challenge period), or a fast intent order. */
export type WithdrawalMode = "standard" | "fast";

export const ASSET_NAMES: Record<Asset, string> = { eth: "ETH", token: "Primary token" };

/** The L2 standard bridge is an OP Stack predeploy, so its address comes from viem, not the deployment file. */
export const L2_STANDARD_BRIDGE: Address = chainConfig.contracts.l2StandardBridge.address;

/** The token address the L2 bridge uses for ETH in `withdrawTo` and in its `WithdrawalInitiated` events. */
export const LEGACY_ETH: Address = "0xDeadDeAddeAddEAddeadDEaDDEAdDeaDDeAD0000";

/**
 * The gas the bridge's message gets on the other chain. Same values as the repo's bridge CLI (the OP SDK
 * defaults it uses): 200 000 for a deposit's relay on L2; 0 for a withdrawal, whose L1 relay is paid by
 * whoever finalizes and still gets the messenger's fixed overhead (enough for an ETH or ERC-20 release).
 */
export const DEPOSIT_MIN_GAS_LIMIT = 200_000;
export const WITHDRAWAL_MIN_GAS_LIMIT = 0;

/** The L2 chain as viem's op-stack actions type their `targetChain`: its L1 contracts keyed by the L1 chain id. */
export type OpTargetChain = Chain & { contracts: Record<"portal" | "l2OutputOracle", Record<number, ChainContract>> };

/**
 * `chains.l2` typed for the op-stack actions. `appChains` builds it with these contracts but types it as a
 * plain `Chain`; the check turns a configuration mistake into a readable error instead of an undefined read.
 */
export function opTargetChain({ chains }: AppSettings): OpTargetChain {
  // typescript-eslint sees the chain's contracts typed more narrowly than tsc does; tsc needs this widening.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  const contracts = chains.l2.contracts as Partial<OpTargetChain["contracts"]> | undefined;
  if (contracts?.portal?.[chains.l1.id] === undefined || contracts.l2OutputOracle?.[chains.l1.id] === undefined) {
    throw new Error(`The L2 chain definition lacks its portal or output oracle on chain ${chains.l1.id}.`);
  }
  return chains.l2 as OpTargetChain;
}

/** The wagmi public clients of both chains, with viem's op-stack actions (reads need no wallet). */
export function opPublicClients(wagmiConfig: Config, { chains }: AppSettings) {
  const l1 = getPublicClient(wagmiConfig, { chainId: chains.l1.id });
  const l2 = getPublicClient(wagmiConfig, { chainId: chains.l2.id });
  // Both chains are in the wagmi config, so a missing client is a programming error, not a user's.
  if (l1 === undefined || l2 === undefined) throw new Error("The app's wagmi configuration lacks one of the chains.");
  return { l1: l1.extend(publicActionsL1()), l2: l2.extend(publicActionsL2()) };
}

/** The wallet's client on L1 with the op-stack L1 actions (prove and finalize). TxButton has switched the wallet to L1. */
export async function opWalletL1(wagmiConfig: Config, { chains }: AppSettings) {
  const wallet = await getWalletClient(wagmiConfig, { chainId: chains.l1.id });
  return wallet.extend(walletActionsL1());
}

/**
 * `simulateAndWrite` with its parameters checked against the ABI (function name, argument types, value),
 * as wagmi's `simulateContract` checks them; `simulateAndWrite` itself takes them unchecked.
 */
export function writeChecked<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, "nonpayable" | "payable">,
  const args extends ContractFunctionArgs<abi, "nonpayable" | "payable", functionName>,
>(wagmiConfig: Config, parameters: SimulateContractParameters<abi, functionName, args, Config>): Promise<Hash> {
  return simulateAndWrite(wagmiConfig, parameters as unknown as SimulateContractParameters);
}
