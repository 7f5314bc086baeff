import { erc1155Abi, erc20Abi, erc721Abi, type Abi, type Address } from "viem";
import { chainConfig } from "viem/op-stack";

import type { NetworkConfig } from "@avn/protocol/network-config";
import {
  gameItemAbi,
  governanceExecutorAbi,
  l1StandardBridgeAbi,
  l2OutputOracleAbi,
  l2StandardBridgeAbi,
  nodeLicenseAbi,
  nodeRegistryAbi,
  optimismPortalAbi,
  primaryTokenAbi,
  protocolGovernorAbi,
  protocolTimelockAbi,
  rewardPoolsAbi,
  stakedTokenAbi,
  verificationRegistryAbi,
  voucherClaimsAbi,
} from "../generated/abis";
import { destinationSettlerAbi, l1OriginSettlerAbi, l2DestinationSettlerAbi, originSettlerAbi } from "../generated/intent-abis";
import {
  gasPriceOracleAbi,
  l1BlockAbi,
  l1CrossDomainMessengerAbi,
  l1Erc721BridgeAbi,
  l2CrossDomainMessengerAbi,
  l2Erc721BridgeAbi,
  l2ToL1MessagePasserAbi,
  optimismMintableErc20Abi,
  optimismMintableErc20FactoryAbi,
  superchainConfigAbi,
  systemConfigAbi,
} from "../generated/op-abis";

export type ChainKey = "l1" | "l2";

/** A contract the explorer knows by name, with the ABI its calls, events and errors decode with. */
export interface KnownContract {
  chain: ChainKey;
  name: string;
  address: Address;
  abi: Abi;
}

/** The ABI of each contract name the deployment's configuration can hold. */
const ABI_BY_NAME: Record<string, Abi> = {
  PrimaryToken: primaryTokenAbi,
  StakedToken: stakedTokenAbi,
  NodeLicense: nodeLicenseAbi,
  NodeRegistry: nodeRegistryAbi,
  VerificationRegistry: verificationRegistryAbi,
  RewardPools: rewardPoolsAbi,
  GovernanceExecutor: governanceExecutorAbi,
  VoucherClaims: voucherClaimsAbi,
  Governor: protocolGovernorAbi,
  Timelock: protocolTimelockAbi,
  OptimismPortal: optimismPortalAbi,
  L2OutputOracle: l2OutputOracleAbi,
  L1StandardBridge: l1StandardBridgeAbi,
  L1CrossDomainMessenger: l1CrossDomainMessengerAbi,
  OriginSettler: originSettlerAbi,
  DestinationSettler: destinationSettlerAbi,
};

/** Names the configuration holds on both chains for different contracts: fast deposits' settlers are the other way round. */
const ABI_BY_CHAIN_AND_NAME: Record<ChainKey, Record<string, Abi>> = {
  l1: { OriginSettler: l1OriginSettlerAbi },
  l2: { DestinationSettler: l2DestinationSettlerAbi },
};

/** The OP Stack's L2 predeploys: at the same address on every OP chain, so named by viem, not the deployment. */
const PREDEPLOYS: Array<[string, Address, Abi]> = [
  ["L2CrossDomainMessenger", chainConfig.contracts.l2CrossDomainMessenger.address, l2CrossDomainMessengerAbi],
  ["L2StandardBridge", chainConfig.contracts.l2StandardBridge.address, l2StandardBridgeAbi],
  ["L2ToL1MessagePasser", chainConfig.contracts.l2ToL1MessagePasser.address, l2ToL1MessagePasserAbi],
  ["L1Block", chainConfig.contracts.l1Block.address, l1BlockAbi],
  ["GasPriceOracle", chainConfig.contracts.gasPriceOracle.address, gasPriceOracleAbi],
  ["OptimismMintableERC20Factory", "0x4200000000000000000000000000000000000012", optimismMintableErc20FactoryAbi],
  ["L2ERC721Bridge", chainConfig.contracts.l2Erc721Bridge.address, l2Erc721BridgeAbi],
];

/**
 * Every ABI the explorer decodes with, the protocol's first: a call or log of an unknown contract is tried
 * against each in this order. The standard tokens come after the protocol's (an ERC-20 `Transfer` and an
 * ERC-721 `Transfer` share a topic and differ in what is indexed; decoding tries each).
 */
export const ALL_ABIS: readonly Abi[] = [
  verificationRegistryAbi,
  rewardPoolsAbi,
  nodeRegistryAbi,
  nodeLicenseAbi,
  stakedTokenAbi,
  primaryTokenAbi,
  governanceExecutorAbi,
  protocolGovernorAbi,
  protocolTimelockAbi,
  voucherClaimsAbi,
  gameItemAbi,
  originSettlerAbi,
  destinationSettlerAbi,
  l1OriginSettlerAbi,
  l2DestinationSettlerAbi,
  optimismPortalAbi,
  l2OutputOracleAbi,
  l1StandardBridgeAbi,
  l2StandardBridgeAbi,
  l1CrossDomainMessengerAbi,
  l2CrossDomainMessengerAbi,
  l2ToL1MessagePasserAbi,
  l1BlockAbi,
  gasPriceOracleAbi,
  optimismMintableErc20FactoryAbi,
  optimismMintableErc20Abi,
  l1Erc721BridgeAbi,
  l2Erc721BridgeAbi,
  systemConfigAbi,
  superchainConfigAbi,
  erc20Abi,
  erc721Abi,
  erc1155Abi,
];

/** The contracts of the deployment (by their configuration names) and the L2 predeploys. */
export function knownContracts(config: NetworkConfig): KnownContract[] {
  const known: KnownContract[] = [];
  for (const chain of ["l1", "l2"] as const) {
    for (const [name, address] of Object.entries(config.contracts[chain] as Record<string, Address | undefined>)) {
      if (address === undefined) continue;
      known.push({ chain, name, address, abi: ABI_BY_CHAIN_AND_NAME[chain][name] ?? ABI_BY_NAME[name] ?? primaryTokenAbi });
    }
  }
  for (const [name, address, abi] of PREDEPLOYS) known.push({ chain: "l2", name, address, abi });
  return known;
}

/** The known contract at `address` on `chain`, if any. */
export function contractAt(
  known: readonly KnownContract[],
  chain: ChainKey,
  address: string | null | undefined,
): KnownContract | undefined {
  if (address === null || address === undefined) return undefined;
  const lower = address.toLowerCase();
  return known.find((contract) => contract.chain === chain && contract.address.toLowerCase() === lower);
}
