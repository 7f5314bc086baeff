import { expect } from "chai";
import { network } from "hardhat";
import type { Address, Hex } from "viem";

import { batchHash, l2CallsOf, type GovernedContracts, type L2Call } from "@avn/protocol/governance/proposal";
import { deployProtocol, QUORUM, REQUEST_FEE } from "../../helpers/protocol.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

/**
 * The L2 end of governance on one Hardhat chain: a stand-in messenger relays what the L1 timelock (here an
 * account playing it) sends, the executor holds the admin role of the protocol contracts, and the calls
 * are built by the same module the CLI and the web app use.
 */
async function fixture() {
  const protocol = await deployProtocol(ethers);
  const [, , , , , , , , , , , l1Timelock, stranger] = await ethers.getSigners();
  const messenger = await ethers.deployContract("MockCrossDomainMessenger");
  const executor = await ethers.deployContract("GovernanceExecutor", [await messenger.getAddress(), l1Timelock.address]);
  const l2: GovernedContracts = {
    StakedToken: (await protocol.staked.getAddress()) as Address,
    NodeLicense: (await protocol.license.getAddress()) as Address,
    NodeRegistry: (await protocol.nodeRegistry.getAddress()) as Address,
    VerificationRegistry: (await protocol.registry.getAddress()) as Address,
    RewardPools: (await protocol.rewardPools.getAddress()) as Address,
  };
  // The deployment's handover: the admin starts the transfer of every admin role to the executor.
  for (const contract of [protocol.staked, protocol.license, protocol.nodeRegistry, protocol.registry, protocol.rewardPools]) {
    await contract.connect(protocol.admin).beginDefaultAdminTransfer(await executor.getAddress());
  }
  const deadline = BigInt(await time.latest()) + 86_400n;
  /** The executor's `execute(calls, deadline)` relayed as if `sender` had sent it from L1. */
  const relay = (calls: readonly L2Call[], options: { sender?: string; deadline?: bigint; value?: bigint } = {}) =>
    messenger.relay(
      options.sender ?? l1Timelock.address,
      executor.getAddress(),
      executor.interface.encodeFunctionData("execute", [calls.map((call) => ({ ...call })), options.deadline ?? deadline]),
      { value: options.value ?? 0n },
    );
  return { ...protocol, messenger, executor, l1Timelock, stranger, l2, deadline, relay };
}

describe("GovernanceExecutor", function () {
  it("stores the messenger and the L1 timelock it obeys, and refuses zero addresses", async function () {
    const { executor, messenger, l1Timelock } = await loadFixture(fixture);
    expect(await executor.MESSENGER()).to.equal(await messenger.getAddress());
    expect(await executor.L1_TIMELOCK()).to.equal(l1Timelock.address);
    const factory = await ethers.getContractFactory("GovernanceExecutor");
    await expect(factory.deploy(ethers.ZeroAddress, l1Timelock.address)).to.be.revertedWithCustomError(
      factory,
      "GovernanceExecutor_ZeroAddress",
    );
    await expect(factory.deploy(l1Timelock.address, ethers.ZeroAddress)).to.be.revertedWithCustomError(
      factory,
      "GovernanceExecutor_ZeroAddress",
    );
  });

  it("accepts the admin role of every protocol contract through its first batch, then changes parameters", async function () {
    const { executor, relay, l2, nodeRegistry, registry, rewardPools, staked, license, deadline } = await loadFixture(fixture);
    const accept = l2CallsOf({ kind: "accept-admin" }, l2);
    await expect(relay(accept)).to.emit(executor, "BatchExecuted");
    for (const contract of [staked, license, nodeRegistry, registry, rewardPools])
      expect(await contract.defaultAdmin()).to.equal(await executor.getAddress());

    const calls = [
      ...l2CallsOf({ kind: "set-quorum", quorum: 3n }, l2),
      ...l2CallsOf({ kind: "set-request-fee", fee: 2n * 10n ** 18n }, l2),
    ];
    await expect(relay(calls))
      .to.emit(executor, "CallExecuted")
      .withArgs(batchHash(calls, deadline), 0n, l2.NodeRegistry, 0n, calls[0].data)
      .and.to.emit(executor, "BatchExecuted")
      .withArgs(batchHash(calls, deadline), 2n);
    expect(await nodeRegistry.quorum()).to.equal(3n);
    expect(await registry.requestFee()).to.equal(2n * 10n ** 18n);
  });

  it("runs a batch all or nothing: a failing call undoes the calls before it", async function () {
    const { executor, relay, l2, nodeRegistry } = await loadFixture(fixture);
    await relay(l2CallsOf({ kind: "accept-admin" }, l2));
    const calls = [...l2CallsOf({ kind: "set-quorum", quorum: 3n }, l2), ...l2CallsOf({ kind: "set-quorum", quorum: 99n }, l2)];
    const invalid = nodeRegistry.interface.encodeErrorResult("NodeRegistry_InvalidQuorum", [99n]);
    await expect(relay(calls)).to.be.revertedWithCustomError(executor, "GovernanceExecutor_CallFailed").withArgs(1n, invalid);
    expect(await nodeRegistry.quorum()).to.equal(QUORUM);
  });

  it("refuses a call from anyone but the messenger", async function () {
    const { executor, l2, stranger, deadline } = await loadFixture(fixture);
    const calls = l2CallsOf({ kind: "accept-admin" }, l2);
    await expect(executor.connect(stranger).execute(calls, deadline))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_NotMessenger")
      .withArgs(stranger.address);
  });

  it("refuses a message from any L1 sender but the timelock", async function () {
    const { executor, relay, l2, stranger, registry, admin } = await loadFixture(fixture);
    await expect(relay(l2CallsOf({ kind: "accept-admin" }, l2), { sender: stranger.address }))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_NotL1Timelock")
      .withArgs(stranger.address);
    expect(await registry.defaultAdmin()).to.equal(admin.address);
  });

  it("refuses a batch past its deadline, an empty batch, and ETH that does not match the calls", async function () {
    const { executor, relay, l2, registry } = await loadFixture(fixture);
    const calls = l2CallsOf({ kind: "accept-admin" }, l2);
    const past = BigInt(await time.latest());
    await expect(relay(calls, { deadline: past }))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_Expired")
      .withArgs(past);
    await expect(relay([])).to.be.revertedWithCustomError(executor, "GovernanceExecutor_EmptyBatch");
    await expect(relay(calls, { value: 1n }))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_ValueMismatch")
      .withArgs(1n, 0n);
    expect(await registry.requestFee()).to.equal(REQUEST_FEE);
  });

  it("forwards the ETH a batch carries to its calls", async function () {
    const { relay, stranger } = await loadFixture(fixture);
    const before = await ethers.provider.getBalance(stranger.address);
    const payment: L2Call = { target: stranger.address as Address, value: 5n, data: "0x" };
    await relay([payment], { value: 5n });
    expect(await ethers.provider.getBalance(stranger.address)).to.equal(before + 5n);
  });

  it("runs a batch once, lets anyone replay a failed one, and never runs one that governance cancelled", async function () {
    const { executor, messenger, relay, l2, nodeRegistry, l1Timelock, deadline } = await loadFixture(fixture);
    const setQuorum = l2CallsOf({ kind: "set-quorum", quorum: 3n }, l2);
    // Relayed before the executor administers the registry: the batch fails, as the L2 messenger records a failed message.
    const message = executor.interface.encodeFunctionData("execute", [setQuorum, deadline]);
    const relayFirst = () => messenger.relayMessage(1n, l1Timelock.address, executor.getAddress(), 0n, 1_000_000n, message);
    await expect(relayFirst()).to.emit(messenger, "FailedRelayedMessage");
    expect(await executor.batchState(batchHash(setQuorum, deadline))).to.equal(0n);
    // Once governance holds the admin role, anyone may replay it: it runs, once.
    await relay(l2CallsOf({ kind: "accept-admin" }, l2));
    await expect(relayFirst()).to.emit(messenger, "RelayedMessage");
    expect(await nodeRegistry.quorum()).to.equal(3n);
    expect(await executor.batchState(batchHash(setQuorum, deadline))).to.equal(1n);
    await expect(relay(setQuorum))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_BatchClosed")
      .withArgs(batchHash(setQuorum, deadline), 1n);

    // A batch that failed and that governance gives up on: a later batch cancels it, and no replay can run it.
    const lower = l2CallsOf({ kind: "set-quorum", quorum: 1n }, l2);
    const cancel = {
      target: (await executor.getAddress()) as Address,
      value: 0n,
      data: executor.interface.encodeFunctionData("cancelBatch", [batchHash(lower, deadline)]) as Hex,
    };
    await expect(relay([cancel]))
      .to.emit(executor, "BatchCancelled")
      .withArgs(batchHash(lower, deadline));
    await expect(relay(lower))
      .to.be.revertedWithCustomError(executor, "GovernanceExecutor_BatchClosed")
      .withArgs(batchHash(lower, deadline), 2n);
    await expect(executor.cancelBatch(batchHash(lower, deadline))).to.be.revertedWithCustomError(executor, "GovernanceExecutor_NotSelf");
    expect(await nodeRegistry.quorum()).to.equal(3n);
  });

  it("runs a batch up to and including its deadline second, and not one second after", async function () {
    const { executor, relay, l2, registry } = await loadFixture(fixture);
    const accept = l2CallsOf({ kind: "accept-admin" }, l2);
    const deadline = BigInt(await time.latest()) + 100n;
    await time.setNextBlockTimestamp(deadline + 1n);
    await expect(relay(accept, { deadline })).to.be.revertedWithCustomError(executor, "GovernanceExecutor_Expired").withArgs(deadline);
    const exact = BigInt(await time.latest()) + 50n;
    await time.setNextBlockTimestamp(exact);
    await relay(accept, { deadline: exact });
    expect(await registry.defaultAdmin()).to.equal(await executor.getAddress());
  });
});
