import { expect } from "chai";
import { network } from "hardhat";
import { decodeFunctionData, type Address, type Hex } from "viem";

import L1Module from "../../../deploy/modules/L1.ts";
import { loadParameters } from "../../../src/deploy/parameters.ts";
import { Governance, GovernanceError } from "../../../src/governance/governance.ts";
import { crossDomainMessageHash, EXECUTOR_ABI, type GovernedContracts } from "@avn/protocol/governance/proposal";
import { deployProtocol, QUORUM } from "../../helpers/protocol.ts";
import { E18 } from "@avn/protocol/units";

const { ethers, ignition, networkHelpers } = await network.create();
const { loadFixture, mine, time } = networkHelpers;

/**
 * Both ends of governance on one Hardhat chain: module L1 as deployed with the devnet's parameter file
 * (the governor and its timelock over the primary token), the protocol contracts with their admin role
 * being handed to the executor, and two stand-in messengers for the OP bridge between them. The
 * `Governance` client is the one the CLI uses.
 */
async function fixture() {
  const parameters = await loadParameters("devnetL1", "L1");
  const deployed = await ignition.deploy(L1Module, { parameters });
  const governor = await ethers.getContractAt("ProtocolGovernor", await deployed.governor.getAddress());
  const timelock = await ethers.getContractAt("ProtocolTimelock", await deployed.timelock.getAddress());
  const token = await ethers.getContractAt("PrimaryToken", await deployed.primary.getAddress());
  const signers = await ethers.getSigners();
  const [deployer] = signers;
  const holder = signers[12];
  const guardian = await ethers.getSigner(parameters.L1.proposalGuardian as string);

  const protocol = await deployProtocol(ethers);
  const l1Messenger = await ethers.deployContract("MockCrossDomainMessenger");
  const l2Messenger = await ethers.deployContract("MockCrossDomainMessenger");
  const executor = await ethers.deployContract("GovernanceExecutor", [await l2Messenger.getAddress(), await timelock.getAddress()]);
  for (const contract of [protocol.staked, protocol.license, protocol.nodeRegistry, protocol.registry, protocol.rewardPools]) {
    await contract.connect(protocol.admin).beginDefaultAdminTransfer(await executor.getAddress());
  }
  const l2: GovernedContracts = {
    StakedToken: (await protocol.staked.getAddress()) as Address,
    NodeLicense: (await protocol.license.getAddress()) as Address,
    NodeRegistry: (await protocol.nodeRegistry.getAddress()) as Address,
    VerificationRegistry: (await protocol.registry.getAddress()) as Address,
    RewardPools: (await protocol.rewardPools.getAddress()) as Address,
  };
  const addresses = {
    governor: await governor.getAddress(),
    timelock: await timelock.getAddress(),
    token: await token.getAddress(),
    l1Messenger: await l1Messenger.getAddress(),
    executor: await executor.getAddress(),
    l2Messenger: await l2Messenger.getAddress(),
    l2,
  };
  const as = (signer: (typeof signers)[number]) => new Governance({ l1: signer, l2: ethers.provider, addresses, l1BlockSeconds: 2 });
  // The holder gets 2% of the supply: enough to propose, not enough for the 4% quorum alone.
  await token.connect(deployer).transfer(holder.address, 20_000_000n * E18);
  return {
    ...protocol,
    governor,
    timelock,
    token,
    deployer,
    holder,
    guardian,
    l1Messenger,
    l2Messenger,
    executor,
    l2,
    addresses,
    as,
    parameters,
  };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** Carries proposal `id` (voted for by the deployer) through the vote and the timelock, then executes it. */
async function passAndExecute(f: Fixture, id: bigint) {
  const governance = f.as(f.deployer);
  await mine(2);
  await governance.vote(id, "for");
  await mine(Number(f.parameters.L1.votingPeriod));
  await governance.queue(id);
  await time.increase(Number(f.parameters.L1.timelockDelay));
  return governance.execute(id);
}

/** Delivers the message the L1 messenger recorded at `index` through the L2 messenger, as the OP bridge does. */
async function relayOnL2(f: Fixture, index: bigint) {
  const sent = await f.l1Messenger.sent(index);
  const nonce = index | (1n << 240n);
  await f.l2Messenger.relayMessage(nonce, sent.sender, sent.target, sent.value, sent.minGasLimit, sent.message, { value: sent.value });
  return crossDomainMessageHash({
    nonce,
    sender: sent.sender as Address,
    target: sent.target as Address,
    value: sent.value,
    gasLimit: sent.minGasLimit,
    message: sent.message as Hex,
  });
}

describe("ProtocolGovernor and ProtocolTimelock (module L1)", function () {
  it("are deployed with the parameters of the network's file, the timelock administering itself", async function () {
    const { governor, timelock, token, deployer, guardian, parameters } = await loadFixture(fixture);
    const p = parameters.L1;
    expect(await governor.token()).to.equal(await token.getAddress());
    expect(await governor.timelock()).to.equal(await timelock.getAddress());
    expect(await governor.votingDelay()).to.equal(BigInt(p.votingDelay as number));
    expect(await governor.votingPeriod()).to.equal(BigInt(p.votingPeriod as number));
    expect(await governor.proposalThreshold()).to.equal(BigInt((p.proposalThreshold as bigint | string).toString().replace(/n$/, "")));
    expect(await governor["quorumNumerator()"]()).to.equal(BigInt(p.quorumPercent as number));
    expect(await governor.proposalGuardian()).to.equal(guardian.address);
    expect(await timelock.getMinDelay()).to.equal(BigInt(p.timelockDelay as number));
    const governorAddress = await governor.getAddress();
    expect(await timelock.hasRole(await timelock.PROPOSER_ROLE(), governorAddress)).to.equal(true);
    expect(await timelock.hasRole(await timelock.CANCELLER_ROLE(), governorAddress)).to.equal(true);
    // Anyone executes a ready operation; nobody but the timelock itself administers it.
    expect(await timelock.hasRole(await timelock.EXECUTOR_ROLE(), ethers.ZeroAddress)).to.equal(true);
    expect(await timelock.hasRole(await timelock.DEFAULT_ADMIN_ROLE(), deployer.address)).to.equal(false);
    expect(await timelock.hasRole(await timelock.DEFAULT_ADMIN_ROLE(), await timelock.getAddress())).to.equal(true);
  });

  it("carries a passed proposal from the token holders' vote to the L2 contracts, and only then changes them", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    const id = await f
      .as(f.deployer)
      .propose([{ kind: "accept-admin" }, { kind: "set-quorum", quorum: 3n }], { note: "Hand over and raise the quorum" });
    expect(id).to.equal(1n); // sequential ids people can type

    const pending = await f.as(f.deployer).status(id);
    expect(pending.state).to.equal("Pending");
    expect(pending.description).to.equal(
      `Hand over and raise the quorum\n\n- accept the admin role of the L2 protocol contracts\n- set the quorum to 3 licenses\n\n#proposer=${f.deployer.address}`,
    );
    expect(pending.changes).to.deep.equal([
      "L2: StakedToken.acceptDefaultAdminTransfer()",
      "L2: NodeLicense.acceptDefaultAdminTransfer()",
      "L2: NodeRegistry.acceptDefaultAdminTransfer()",
      "L2: VerificationRegistry.acceptDefaultAdminTransfer()",
      "L2: RewardPools.acceptDefaultAdminTransfer()",
      "L2: NodeRegistry.setQuorum(3)",
    ]);
    expect(pending.warnings).to.deep.equal([]);
    expect(pending.next).to.match(/^voting starts after block \d+, in 2 blocks \(~4 s\)$/);
    await expectGovernanceError(f.as(f.deployer).vote(id, "for"), "TOO_EARLY", /Cannot vote: voting starts/);

    await mine(2);
    await f.as(f.deployer).vote(id, "for");
    await expectGovernanceError(f.as(f.deployer).queue(id), "TOO_EARLY", /voting is open until block \d+: \d+ blocks \(~\d+ s\) left/);
    await mine(Number(f.parameters.L1.votingPeriod));
    expect((await f.as(f.deployer).status(id)).state).to.equal("Succeeded");
    await f.as(f.holder).queue(id); // anyone may queue and execute
    await expectGovernanceError(f.as(f.holder).execute(id), "TOO_EARLY", /queued: the timelock releases it in \d+ s/);
    expect(await f.l1Messenger.sentCount()).to.equal(0n);

    await time.increase(Number(f.parameters.L1.timelockDelay));
    const { messageHash } = await f.as(f.holder).execute(id);
    expect(await f.l1Messenger.sentCount()).to.equal(1n);
    const sent = await f.l1Messenger.sent(0n);
    expect(sent.sender).to.equal(await f.timelock.getAddress());
    expect(sent.target).to.equal(await f.executor.getAddress());
    const [calls] = decodeFunctionData({ abi: EXECUTOR_ABI, data: sent.message as Hex }).args as unknown as [Array<{ target: string }>];
    expect(calls.map((call) => call.target)).to.deep.equal([
      f.l2.StakedToken,
      f.l2.NodeLicense,
      f.l2.NodeRegistry,
      f.l2.VerificationRegistry,
      f.l2.RewardPools,
      f.l2.NodeRegistry,
    ]);
    // Executed on L1, not yet relayed: nothing has changed on L2.
    expect((await f.as(f.holder).status(id)).l2).to.deep.equal({ outcome: "awaiting relay", messageHash });
    expect(await f.nodeRegistry.quorum()).to.equal(QUORUM);
    expect(await f.registry.defaultAdmin()).to.equal(f.admin.address);

    expect(await relayOnL2(f, 0n)).to.equal(messageHash);
    const done = await f.as(f.holder).status(id);
    expect([done.state, done.l2?.outcome, done.next]).to.deep.equal(["Executed", "executed", "executed on L1 and on L2"]);
    expect(await f.nodeRegistry.quorum()).to.equal(3n);
    for (const contract of [f.staked, f.license, f.nodeRegistry, f.registry, f.rewardPools])
      expect(await contract.defaultAdmin()).to.equal(await f.executor.getAddress());
    // The same message relayed again changes nothing: the messenger refuses it.
    await expect(relayOnL2(f, 0n)).to.be.revertedWithCustomError(f.l2Messenger, "MockCrossDomainMessenger_AlreadyRelayed");
    await expectGovernanceError(f.as(f.holder).execute(id), "WRONG_STATE", /executed on L1 and on L2/);
  });

  it("reports an L2 call that failed on relay as failed, and changes nothing there", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    // The executor does not administer the registry yet: setting the quorum fails on L2. The proposal's
    // check says so first; forced past it, the proposal passes and its batch fails on relay.
    await expectGovernanceError(
      f.as(f.deployer).propose([{ kind: "set-quorum", quorum: 3n }]),
      "L2_CHECK_FAILED",
      /^Call 1 \(NodeRegistry\.setQuorum\(3\)\) would fail on L2 today: AccessControlUnauthorizedAccount\(0x[0-9a-fA-F]{40}, 0x0{64}\)\. If a pending proposal makes it valid/,
    );
    const id = await f.as(f.deployer).propose([{ kind: "set-quorum", quorum: 3n }], { skipL2Check: true });
    await passAndExecute(f, id);
    await relayOnL2(f, 0n);
    expect((await f.as(f.holder).status(id)).l2?.outcome).to.equal("failed (replayable until its deadline)");
    expect(await f.nodeRegistry.quorum()).to.equal(QUORUM);
  });

  it("never executes a proposal that lost its vote", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    await f.as(f.holder).delegate();
    const id = await f.as(f.holder).propose([{ kind: "set-quorum", quorum: 1n }], { skipL2Check: true });
    await mine(2);
    await f.as(f.holder).vote(id, "for");
    await f.as(f.deployer).vote(id, "against");
    await mine(Number(f.parameters.L1.votingPeriod));
    const status = await f.as(f.holder).status(id);
    expect(status.state).to.equal("Defeated");
    expect(status.next).to.match(/^the proposal was defeated \(for 20,000,000, against 980,000,000/);
    await expectGovernanceError(f.as(f.holder).queue(id), "WRONG_STATE", /defeated/);
    await expectGovernanceError(f.as(f.holder).execute(id), "WRONG_STATE", /defeated/);
    // The governor itself refuses too, whatever a client does.
    await expect(f.governor["queue(uint256)"](id)).to.be.revertedWithCustomError(f.governor, "GovernorUnexpectedProposalState");
    await expect(f.governor["execute(uint256)"](id)).to.be.revertedWithCustomError(f.governor, "GovernorUnexpectedProposalState");
    expect(await f.l1Messenger.sentCount()).to.equal(0n);
  });

  it("lets the proposal guardian, and no one else, cancel a proposal that passed and waits in the timelock", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    const id = await f.as(f.deployer).propose([{ kind: "set-quorum", quorum: 1n }], { skipL2Check: true });
    await mine(2);
    await f.as(f.deployer).vote(id, "for");
    await mine(Number(f.parameters.L1.votingPeriod));
    await f.as(f.deployer).queue(id);
    await expect(f.governor.connect(f.deployer)["cancel(uint256)"](id))
      .to.be.revertedWithCustomError(f.governor, "GovernorUnableToCancel")
      .withArgs(id, f.deployer.address);
    await f.governor.connect(f.guardian)["cancel(uint256)"](id);
    await time.increase(Number(f.parameters.L1.timelockDelay));
    expect((await f.as(f.deployer).status(id)).state).to.equal("Canceled");
    await expectGovernanceError(f.as(f.deployer).execute(id), "WRONG_STATE", /canceled/);
  });

  it("says plainly why a step cannot be taken: no votes to propose, none at the snapshot, a second vote, an unknown id", async function () {
    const f = await loadFixture(fixture);
    await expectGovernanceError(
      f.as(f.holder).propose([{ kind: "set-quorum", quorum: 3n }]),
      "BELOW_THRESHOLD",
      /Proposing needs 1,000 votes; 0x[0-9a-fA-F]{40} has 0 \(tokens vote once delegated/,
    );
    await f.as(f.deployer).delegate();
    const id = await f.as(f.deployer).propose([{ kind: "accept-admin" }]);
    // Delegating after the proposal's snapshot counts for later proposals only.
    await mine(2);
    await f.as(f.holder).delegate();
    await expectGovernanceError(
      f.as(f.holder).vote(id, "for"),
      "NO_VOTES",
      /had no votes at the proposal's snapshot \(block \d+\): votes count only if delegated before it/,
    );
    await f.as(f.deployer).vote(id, "abstain");
    await expectGovernanceError(f.as(f.deployer).vote(id, "for"), "ALREADY_VOTED", /has already voted on proposal 1/);
    await expectGovernanceError(f.as(f.deployer).status(99n), "UNKNOWN_PROPOSAL", /No proposal 99/);
    await expectGovernanceError(f.as(f.deployer).propose([]), "WRONG_STATE", /at least one change/);
  });
  it("keeps the guardian from cancelling its own replacement, but not a proposal that bundles one with other actions", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    const governor = await f.governor.getAddress();
    const replace = f.governor.interface.encodeFunctionData("setProposalGuardian", [f.holder.address]);
    const propose = async (targets: string[], calldatas: string[], description: string) => {
      await f.governor.connect(f.deployer).propose(
        targets,
        targets.map(() => 0n),
        calldatas,
        description,
      );
      return f.governor.latestProposalId();
    };
    const alone = await propose([governor], [replace], "Replace the guardian");
    expect(await f.governor.replacesGuardianOnly(alone)).to.equal(true);
    await expect(f.governor.connect(f.guardian)["cancel(uint256)"](alone)).to.be.revertedWithCustomError(
      f.governor,
      "GovernorUnableToCancel",
    );
    const bundled = await propose(
      [governor, governor],
      [replace, f.governor.interface.encodeFunctionData("setVotingDelay", [1n])],
      "Replace the guardian, and more",
    );
    expect(await f.governor.replacesGuardianOnly(bundled)).to.equal(false);
    await f.governor.connect(f.guardian)["cancel(uint256)"](bundled);
    expect((await f.as(f.deployer).status(bundled)).state).to.equal("Canceled");

    // The replacement passes, and the guardian changes: governance can always remove its guardian.
    await mine(2);
    await f.as(f.deployer).vote(alone, "for");
    await mine(Number(f.parameters.L1.votingPeriod));
    await f.as(f.deployer).queue(alone);
    await time.increase(Number(f.parameters.L1.timelockDelay));
    await f.as(f.deployer).execute(alone);
    expect(await f.governor.proposalGuardian()).to.equal(f.holder.address);
  });

  it("shows every action of a proposal that is not a plain L2 batch, and warns about it", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    const timelock = await f.timelock.getAddress();
    await f.governor
      .connect(f.deployer)
      .propose([timelock], [0n], [f.timelock.interface.encodeFunctionData("updateDelay", [0n])], "Lower the request fee");
    const status = await f.as(f.deployer).status(await f.governor.latestProposalId());
    expect(status.changes).to.deep.equal(["L1: Timelock.updateDelay(0)"]);
    expect(status.warnings).to.deep.equal(["action 1 is not an L2 batch through the L1 messenger: it acts on L1"]);
    // A batch to another executor, with ETH that its calls do not spend and another gas limit.
    const proposal = await f
      .as(f.deployer)
      .proposalFor([{ kind: "set-quorum", quorum: 3n }], f.deployer.address, { l2GasLimit: 2_000_000 });
    const elsewhere = proposal.calldatas[0].replace(f.addresses.executor.slice(2).toLowerCase(), f.holder.address.slice(2).toLowerCase());
    await f.governor.connect(f.deployer).propose(proposal.targets, [5n], [elsewhere], "Raise the quorum");
    const odd = await f.as(f.deployer).status(await f.governor.latestProposalId());
    expect(odd.changes).to.deep.equal(["L2: NodeRegistry.setQuorum(3)"]);
    expect(odd.warnings).to.deep.equal([
      `action 1 sends its batch to ${f.holder.address}, not to the governance executor`,
      "action 1 sends 5 wei for calls that spend 0: the batch would fail on L2",
      "action 1 gives its batch 2000000 L2 gas (the default is 1000000)",
    ]);
  });

  it("refuses a vote too late for the next block and an execution past the batch's deadline, and pays a batch's ETH", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    const id = await f.as(f.deployer).propose([{ kind: "accept-admin" }]);
    await mine(2);
    await f.as(f.deployer).vote(id, "for");
    const active = await f.as(f.deployer).status(id);
    await mine(Number(active.deadlineBlock - active.block)); // the latest block is the deadline block
    await expectGovernanceError(
      f.as(f.holder).vote(id, "for"),
      "WRONG_STATE",
      /voting closes with block \d+, the latest: too late for another vote/,
    );
    await mine(1);
    await f.as(f.deployer).queue(id);
    await expectGovernanceError(f.as(f.deployer).queue(id), "WRONG_STATE", /it is queued already/);
    await time.increase(3 * 86_400);
    await expectGovernanceError(
      f.as(f.deployer).execute(id),
      "WRONG_STATE",
      /its L2 batch's deadline has passed|must run by .* too soon for the bridge/,
    );

    // A batch that pays: whoever executes it pays what the timelock does not hold.
    const payment = { kind: "call" as const, call: { target: f.holder.address as Address, value: 7n, data: "0x" as Hex } };
    const paid = await f.as(f.deployer).propose([payment]);
    await mine(2);
    await f.as(f.deployer).vote(paid, "for");
    await mine(Number(f.parameters.L1.votingPeriod));
    await f.as(f.deployer).queue(paid);
    await time.increase(Number(f.parameters.L1.timelockDelay));
    await f.deployer.sendTransaction({ to: await f.timelock.getAddress(), value: 3n });
    await f.as(f.deployer).execute(paid);
    expect((await f.l1Messenger.sent(0n)).value).to.equal(7n);
    expect(await ethers.provider.getBalance(await f.timelock.getAddress())).to.equal(0n);
  });

  it("ends each description with its proposer, so nobody can make the same proposal first and cancel it", async function () {
    const f = await loadFixture(fixture);
    await f.as(f.deployer).delegate();
    await f.as(f.holder).delegate();
    const proposal = await f.as(f.deployer).proposalFor([{ kind: "accept-admin" }], f.deployer.address);
    expect(proposal.description.endsWith(`#proposer=${f.deployer.address}`)).to.equal(true);
    await expect(f.governor.connect(f.holder).propose(proposal.targets, proposal.values, proposal.calldatas, proposal.description))
      .to.be.revertedWithCustomError(f.governor, "GovernorRestrictedProposer")
      .withArgs(f.holder.address);
  });
});

async function expectGovernanceError(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(GovernanceError);
    expect((error as GovernanceError).code).to.equal(code);
    expect((error as GovernanceError).message).to.match(message);
    return;
  }
  expect.fail(`expected a GovernanceError ${code}`);
}
