import type { Abi, Address } from "viem";
import { chainConfig } from "viem/op-stack";

import type { AppSettings } from "../../app-context";
import { primaryTokenAbi, protocolGovernorAbi, protocolTimelockAbi } from "../../generated/abis";
import type { GovernedContracts } from "@avn/protocol/governance/proposal";

/** Where governance lives on both chains (the CLI's `GovernanceAddresses`, typed for viem). */
export interface GovernanceAddresses {
  governor: Address;
  timelock: Address;
  /** The primary token on L1: its delegated balances are the votes. */
  token: Address;
  l1Messenger: Address;
  executor: Address;
  /** The L2 messenger predeploy, which records relayed messages. */
  l2Messenger: Address;
  /** The L2 contracts governance administers. */
  l2: GovernedContracts;
}

/**
 * The deployment's governance addresses, or undefined when its configuration names none (all four or none, the
 * schema says), or no `RewardPools`, which governance administers with the other L2 contracts (its admin
 * handover is one of the batch's acceptances).
 */
export function governanceAddresses({ config }: AppSettings): GovernanceAddresses | undefined {
  const { l1, l2 } = config.contracts;
  if (
    l1.Governor === undefined ||
    l1.Timelock === undefined ||
    l1.L1CrossDomainMessenger === undefined ||
    l2.GovernanceExecutor === undefined ||
    l2.RewardPools === undefined
  )
    return undefined;
  return {
    governor: l1.Governor,
    timelock: l1.Timelock,
    token: l1.PrimaryToken,
    l1Messenger: l1.L1CrossDomainMessenger,
    executor: l2.GovernanceExecutor,
    l2Messenger: chainConfig.contracts.l2CrossDomainMessenger.address,
    l2: {
      StakedToken: l2.StakedToken,
      NodeLicense: l2.NodeLicense,
      NodeRegistry: l2.NodeRegistry,
      VerificationRegistry: l2.VerificationRegistry,
      RewardPools: l2.RewardPools,
    },
  };
}

/**
 * The governor's ABI with the custom errors of the contracts its calls reach (the timelock on queue and
 * execute, the token's checkpoints on a vote), so that a refusal from any of them is decoded by name.
 */
export const governorCallAbi = [
  ...protocolGovernorAbi,
  ...protocolTimelockAbi.filter((item) => item.type === "error"),
  ...primaryTokenAbi.filter((item) => item.type === "error"),
] as const satisfies Abi;
