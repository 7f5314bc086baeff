import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { AbiCoder, toBeHex, zeroPadValue } from "ethers";

import { deployProtocolContracts, type DeployTarget } from "../../src/deploy/contracts.ts";
import { E18 } from "@avn/protocol/units";
export { E18 };
// The protocol's own defaults, which deployProtocol deploys with: the tests compare against the values
// the shipped modules use.
export { EPOCH_DURATION, JOB_TIMEOUT, LIVENESS_WINDOW, QUORUM, REQUEST_FEE } from "../../deploy/modules/parts/defaults.ts";

// The tests' license sale: a supply small enough to sell out, and tiers cheap enough to buy in bulk.
export const MAX_SUPPLY = 1000n;
export const PRICE_TIERS = [
  { upToSupply: 10n, price: 100n * E18 },
  { upToSupply: 100n, price: 200n * E18 },
  { upToSupply: 1000n, price: 500n * E18 },
];

/** A 32-byte `balanceOf` word as the EVM source adapter returns it (the API's QueryResult). */
export function balanceWord(balance: bigint): string {
  return toBeHex(balance, 32);
}

/** An EVM address left-padded into bytes32, as jobs store it. */
export function addressToBytes32(address: string): string {
  return zeroPadValue(address, 32);
}

/** The answer votes agree on: keccak256(abi.encode(subject, balance, keccak256(queryResult))). */
export function resultHash(
  ethers: HardhatEthers,
  chain: number,
  subject: { owner: string; asset: string },
  balance: bigint,
  queryResult: string,
): string {
  const coder = AbiCoder.defaultAbiCoder();
  const subjectHash = ethers.keccak256(coder.encode(["uint8", "bytes32", "bytes32"], [chain, subject.owner, subject.asset]));
  return ethers.keccak256(coder.encode(["bytes32", "uint256", "bytes32"], [subjectHash, balance, ethers.keccak256(queryResult)]));
}

/**
 * Deploys the contracts on one chain through module Protocol, the wiring shipped to production: the
 * verification registry holds the staked token's protocol role and the node registry's recorder role;
 * the admin (the deployer, account 0) may fund rewards. The module's defaults except the license sale
 * (`MAX_SUPPLY`, `PRICE_TIERS`), and no admin transfer delay, so that tests hand admin roles over at once.
 * `target` is a connection's `ethers` (or the connection). Three owners (alice, bob, carol) each buy a
 * license and delegate it to their own burner, which heart-beats. The consumer has 1,000 staked tokens of
 * collateral.
 */
export async function deployProtocol(target: DeployTarget) {
  const ethers = "ignition" in target ? target.ethers : target;
  const signers = await ethers.getSigners();
  const [admin, treasury, rewardsPool, alice, bob, carol, burnerA, burnerB, burnerC, consumer, outsider] = signers;

  const { primary, staked, license, nodeRegistry, registry, rewardPools, attestationVerifier } = await deployProtocolContracts(target, {
    tokens: { supplyRecipient: treasury.address, admin: admin.address, forfeitRecipient: rewardsPool.address, adminTransferDelay: 0n },
    protocol: {
      admin: admin.address,
      treasury: treasury.address,
      adminTransferDelay: 0n,
      licenseMaxSupply: MAX_SUPPLY,
      licensePriceTiers: PRICE_TIERS,
    },
  });

  // Everyone who pays gets primary tokens and approves the contracts that pull them.
  for (const account of [admin, alice, bob, carol, consumer, outsider]) {
    await primary.connect(treasury).transfer(account.address, 100_000n * E18);
    for (const spender of [license, staked, registry, rewardPools]) {
      await primary.connect(account).approve(await spender.getAddress(), ethers.MaxUint256);
    }
  }

  // Three nodes: one license each (ids 1, 2, 3), delegated to distinct burners that heart-beat.
  const nodes = [
    { owner: alice, burner: burnerA, licenseId: 1n },
    { owner: bob, burner: burnerB, licenseId: 2n },
    { owner: carol, burner: burnerC, licenseId: 3n },
  ];
  for (const node of nodes) {
    await license.connect(node.owner).buy(1n, ethers.MaxUint256);
    await nodeRegistry.connect(node.owner).delegate([node.licenseId], node.burner.address);
    await nodeRegistry.connect(node.burner)["heartbeat(uint32)"](100);
  }

  await registry.connect(consumer).stakeCollateral(consumer.address, 1_000n * E18);

  return {
    primary,
    staked,
    license,
    nodeRegistry,
    registry,
    rewardPools,
    attestationVerifier,
    admin,
    treasury,
    rewardsPool,
    alice,
    bob,
    carol,
    burnerA,
    burnerB,
    burnerC,
    consumer,
    outsider,
    nodes,
  };
}

export type Protocol = Awaited<ReturnType<typeof deployProtocol>>;
