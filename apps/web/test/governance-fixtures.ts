import { getAddress, type Address } from "viem";

import type { GovernanceAddresses } from "../src/pages/governance/addresses";
import type { L2Rules } from "../src/pages/governance/change-drafts";

/** A made-up address whose every byte is `byte` (checksummed, as the chain's tools give them). */
export const address = (byte: number): Address => getAddress(`0x${byte.toString(16).padStart(2, "0").repeat(20)}`);

export const EXECUTOR = address(0xe1);
export const DEPLOYER = address(0xd0);
export const PROPOSER = address(0xa1);

export const ADDRESSES: GovernanceAddresses = {
  governor: address(0x60),
  timelock: address(0x71),
  token: address(0x70),
  l1Messenger: address(0x4d),
  l2Messenger: address(0x42),
  executor: EXECUTOR,
  l2: {
    StakedToken: address(0x51),
    NodeLicense: address(0x52),
    NodeRegistry: address(0x53),
    VerificationRegistry: address(0x54),
    RewardPools: address(0x55),
  },
};

/** The L2 contracts as the devnet deploys them: still administered by the deployer, each handing over to the executor. */
export const RULES: L2Rules = {
  quorum: 3n,
  maxQuorum: 10n,
  requestFee: 10n ** 18n,
  jobTimeout: 600n,
  minJobTimeout: 60n,
  maxJobTimeout: 86_400n,
  livenessWindow: 300n,
  maxLivenessWindow: 7n * 86_400n,
  admins: {
    StakedToken: { admin: DEPLOYER, pending: EXECUTOR },
    NodeLicense: { admin: DEPLOYER, pending: EXECUTOR },
    NodeRegistry: { admin: DEPLOYER, pending: EXECUTOR },
    VerificationRegistry: { admin: DEPLOYER, pending: EXECUTOR },
    RewardPools: { admin: DEPLOYER, pending: EXECUTOR },
  },
  executor: EXECUTOR,
};
