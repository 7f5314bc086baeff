import { Contract, NonceManager, Wallet, parseEther, type ContractRunner, type ContractTransactionResponse, type Provider } from "ethers";

import {
  NodeLicense__factory,
  NodeRegistry__factory,
  PrimaryToken__factory,
  RewardPools__factory,
  VerificationRegistry__factory,
} from "../../typechain-types/index.ts";
import { waitFor } from "../common/wait-for.ts";
import { opArtifact } from "../op/artifacts.ts";
import type { DevAccount } from "../common/stack-file.ts";
import { eventArgs } from "./events.ts";
import { E18 } from "@avn/protocol/units";

/** Bridged to each node owner: enough for a license at the first price tier. */
export const OWNER_TOKENS = 5_000n * E18;
/** Bridged to the consumer: its collateral and the example game's. */
export const CONSUMER_TOKENS = 50_000n * E18;
export const CONSUMER_COLLATERAL = 10_000n * E18;
export const GAME_COLLATERAL = 10_000n * E18;
/**
 * Bridged to the challenger and staked as its collateral: its jobs pay the request fee like any other
 * (10 tokens on the devnet), so this pays for 2,000 challenges, about 16 hours at the local stack's rate.
 */
export const CHALLENGER_COLLATERAL = 20_000n * E18;
/** What the demo token holder gets: primary tokens on L1 to bridge, and some already on L2 to stake. */
export const TOKEN_HOLDER_L1_TOKENS = 100_000n * E18;
export const TOKEN_HOLDER_L2_TOKENS = 20_000n * E18;
/**
 * The epoch rewards the deployer (the devnet's `rewardsFunder`) puts in each of the current epoch's and the
 * next ones' pools, so that the Network page and `npm run qos` show what a license would earn.
 */
export const REWARD_POOL_PER_EPOCH = 1_000n * E18;
export const REWARD_EPOCHS_FUNDED = 4n;
/** L2 ETH each burner gets for gas. */
export const BURNER_GAS_MONEY = parseEther("1");
const DEPOSIT_GAS_LIMIT = 200_000;
// Explicit L1 gas: the portal burns L1 gas to buy L2 gas at a price that rises with each deposit in the
// same L1 block, so an estimate made before the previous deposit was mined can fall short.
const DEPOSIT_L1_GAS_LIMIT = 1_500_000n;

/**
 * Sends primary tokens of the deployer's from L1 to each recipient on L2 through the OP standard bridge
 * (`depositERC20To`), and waits until every one has arrived.
 */
export async function bridgePrimaryTokens(
  input: {
    l1: Provider;
    l2: Provider;
    deployer: DevAccount;
    contracts: { l1PrimaryToken: string; l1StandardBridge: string; l2: { PrimaryToken: string } };
  },
  recipients: Array<{ to: string; amount: bigint }>,
): Promise<void> {
  const { contracts } = input;
  const deployerL1 = new NonceManager(new Wallet(input.deployer.privateKey, input.l1));
  const bridge = new Contract(contracts.l1StandardBridge, opArtifact("L1StandardBridge").abi, deployerL1);
  const l2Token = PrimaryToken__factory.connect(contracts.l2.PrimaryToken, input.l2);
  const before = await Promise.all(recipients.map(({ to }) => l2Token.balanceOf(to)));
  const total = recipients.reduce((sum, { amount }) => sum + amount, 0n);
  await (await PrimaryToken__factory.connect(contracts.l1PrimaryToken, deployerL1).approve(contracts.l1StandardBridge, total)).wait();
  for (const { to, amount } of recipients) {
    const deposit = bridge.getFunction("depositERC20To")(
      contracts.l1PrimaryToken,
      contracts.l2.PrimaryToken,
      to,
      amount,
      DEPOSIT_GAS_LIMIT,
      "0x",
      {
        gasLimit: DEPOSIT_L1_GAS_LIMIT,
      },
    ) as Promise<ContractTransactionResponse>;
    await (await deposit).wait();
  }
  for (const [index, { to, amount }] of recipients.entries()) {
    // The deposit relay delivers deposits on the next L2 blocks.
    await waitFor(`bridged tokens for ${to}`, async () => (await l2Token.balanceOf(to)) >= before[index] + amount);
  }
}

export interface NodeOperator {
  owner: DevAccount;
  burner: string;
}

export interface NetworkSetupInput {
  l1: Provider;
  l2: Provider;
  deployer: DevAccount;
  contracts: {
    l1PrimaryToken: string;
    l1StandardBridge: string;
    l2: { PrimaryToken: string; NodeLicense: string; NodeRegistry: string; VerificationRegistry: string; RewardPools?: string };
  };
  operators: NodeOperator[];
  consumer: DevAccount;
  /** A token holder for the web app's pages: primary tokens on both chains. */
  tokenHolder?: DevAccount;
  /** The network's challenger (CHALLENGER_ROLE, granted by governance): its collateral is bridged and staked. */
  challenger?: DevAccount;
  onProgress: (line: string) => void;
}

/**
 * Makes a deployed devnet a working network, through the same paths users take: primary tokens bridged
 * from L1 to the node owners and the consumer through the OP standard bridge; each owner buys a license,
 * delegates it to its node's burner, which gets gas money, and opens its fee account (`delegateLicenses`);
 * the consumer stakes collateral. Returns the license id of each operator, in order.
 */
export async function setUpNetwork(input: NetworkSetupInput): Promise<bigint[]> {
  const { l1, l2, contracts } = input;
  const l1Token = PrimaryToken__factory.connect(contracts.l1PrimaryToken, new NonceManager(new Wallet(input.deployer.privateKey, l1)));

  input.onProgress("Bridging primary tokens from L1 to the node owners, the consumer and the token holder (OP standard bridge)…");
  const recipients = [
    ...input.operators.map(({ owner }) => ({ account: owner, amount: OWNER_TOKENS })),
    { account: input.consumer, amount: CONSUMER_TOKENS },
  ];
  if (input.challenger !== undefined) recipients.push({ account: input.challenger, amount: CHALLENGER_COLLATERAL });
  const rewardPools = contracts.l2.RewardPools;
  if (rewardPools !== undefined) recipients.push({ account: input.deployer, amount: REWARD_POOL_PER_EPOCH * REWARD_EPOCHS_FUNDED });
  if (input.tokenHolder !== undefined) {
    recipients.push({ account: input.tokenHolder, amount: TOKEN_HOLDER_L2_TOKENS });
    await (await l1Token.transfer(input.tokenHolder.address, TOKEN_HOLDER_L1_TOKENS)).wait();
  }
  await bridgePrimaryTokens(
    { l1, l2, deployer: input.deployer, contracts },
    recipients.map(({ account, amount }) => ({ to: account.address, amount })),
  );

  input.onProgress("Selling a license to each node owner, delegating it to the node's burner wallet and opening its fee account…");
  const licenseIds: bigint[] = [];
  for (const { owner, burner } of input.operators) {
    const signer = new NonceManager(new Wallet(owner.privateKey, l2));
    const license = NodeLicense__factory.connect(contracts.l2.NodeLicense, signer);
    const price = await license.quote(1n);
    await (await PrimaryToken__factory.connect(contracts.l2.PrimaryToken, signer).approve(contracts.l2.NodeLicense, price)).wait();
    const licenseId = eventArgs(await (await license.buy(1n, price)).wait(), "LicensesPurchased").firstId as bigint;
    await delegateLicenses(signer, contracts.l2, [licenseId], burner);
    await (await signer.sendTransaction({ to: burner, value: BURNER_GAS_MONEY })).wait();
    licenseIds.push(licenseId);
  }

  input.onProgress("Staking the consumer's verification collateral…");
  await stakeCollateral(l2, input.consumer, contracts.l2, input.consumer.address, CONSUMER_COLLATERAL);
  if (input.challenger !== undefined) {
    input.onProgress("Staking the challenger's collateral…");
    await stakeCollateral(l2, input.challenger, contracts.l2, input.challenger.address, CHALLENGER_COLLATERAL);
  }
  if (rewardPools !== undefined) {
    input.onProgress(`Funding the epoch rewards of the current epoch and the next ${REWARD_EPOCHS_FUNDED - 1n}…`);
    await fundRewardPools(l2, input.deployer, { PrimaryToken: contracts.l2.PrimaryToken, RewardPools: rewardPools });
  }
  return licenseIds;
}

/**
 * What a license owner does to have a node run `licenseIds`: delegates them to the node's burner `operator`,
 * then opens their fee accounts on the verification registry (`openLicenseAccounts`, skipped for accounts
 * already open), so that the first recording or finalization that pays them does not also pay for their fee
 * slots' first write: the owner, who will earn the fees, pays it once (about 51k gas for one license), not the
 * integrator who records first (docs/verification.md, "Fee accounts"). The local stack sets its nodes up
 * through this, and the tests that hold the stack's costs use it too.
 */
export async function delegateLicenses(
  owner: ContractRunner,
  contracts: { NodeRegistry: string; VerificationRegistry: string },
  licenseIds: bigint[],
  operator: string,
): Promise<void> {
  await (await NodeRegistry__factory.connect(contracts.NodeRegistry, owner).delegate(licenseIds, operator)).wait();
  const registry = VerificationRegistry__factory.connect(contracts.VerificationRegistry, owner);
  const open = await Promise.all(licenseIds.map((licenseId) => registry.isLicenseAccountOpen(licenseId)));
  const closed = licenseIds.filter((_, index) => !open[index]);
  if (closed.length > 0) await (await registry.openLicenseAccounts(closed)).wait();
}

/** The funder puts `REWARD_POOL_PER_EPOCH` primary tokens in the pool of the current epoch and of each of the next ones. */
async function fundRewardPools(l2: Provider, funder: DevAccount, contracts: { PrimaryToken: string; RewardPools: string }): Promise<void> {
  const signer = new NonceManager(new Wallet(funder.privateKey, l2));
  const pools = RewardPools__factory.connect(contracts.RewardPools, signer);
  const total = REWARD_POOL_PER_EPOCH * REWARD_EPOCHS_FUNDED;
  await (await PrimaryToken__factory.connect(contracts.PrimaryToken, signer).approve(contracts.RewardPools, total)).wait();
  const current = await pools.currentEpoch();
  for (let epoch = current; epoch < current + REWARD_EPOCHS_FUNDED; epoch++) {
    await (await pools.fundEpochRewards(epoch, REWARD_POOL_PER_EPOCH)).wait();
  }
}

/** `payer` stakes `amount` primary tokens on L2 into `consumer`'s collateral in the verification registry. */
export async function stakeCollateral(
  l2: Provider,
  payer: DevAccount,
  contracts: { PrimaryToken: string; VerificationRegistry: string },
  consumer: string,
  amount: bigint,
): Promise<void> {
  const signer = new NonceManager(new Wallet(payer.privateKey, l2));
  await (await PrimaryToken__factory.connect(contracts.PrimaryToken, signer).approve(contracts.VerificationRegistry, amount)).wait();
  await (await VerificationRegistry__factory.connect(contracts.VerificationRegistry, signer).stakeCollateral(consumer, amount)).wait();
}
