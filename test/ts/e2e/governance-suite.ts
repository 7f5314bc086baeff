import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Contract, Interface, NonceManager, Wallet, type JsonRpcProvider } from "ethers";
import { decodeFunctionData, encodeFunctionData, type Address, type Hex } from "viem";

import { NodeRegistry__factory, ProtocolGovernor__factory, VerificationRegistry__factory } from "../../../typechain-types/index.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { verifyOnChainAndByApi } from "../../../src/devnet/demo-verify.ts";
import { advanceL1, passOnDevnet } from "../../../src/devnet/governance-setup.ts";
import { writeStackFile, stackFilePath, type StackFile } from "../../../src/common/stack-file.ts";
import { NETWORK_ACCOUNTS } from "../../../src/devnet/verification-network.ts";
import { runCli } from "../../../src/governance/cli.ts";
import { Governance } from "../../../src/governance/governance.ts";
import { devnetGovernanceAddresses } from "../../../src/governance/network.ts";
import { DEVNET_L1_BLOCK_SECONDS } from "../../../src/common/stack-file.ts";
import {
  batchHash,
  crossDomainMessageHash,
  EXECUTOR_ABI,
  L1_MESSENGER_ABI,
  L2_MESSENGER_ABI,
  l2CallsOf,
} from "@avn/protocol/governance/proposal";
import { eventually, withL1StandingStill } from "../../helpers/devnet.ts";
import { E18 } from "@avn/protocol/units";

const ADMIN_ABI = [
  "function defaultAdmin() view returns (address)",
  "function pendingDefaultAdmin() view returns (address newAdmin, uint48 schedule)",
];

/** What the governance tests need of the end-to-end network they share with the node tests. */
export interface GovernanceSuiteContext {
  stack: StackFile;
  l1: JsonRpcProvider;
  l2: JsonRpcProvider;
  /** Every license vote cast on `jobId`. */
  votesOn(jobId: bigint): Promise<bigint[]>;
}

/**
 * Governance on the local network with its three circuit nodes: the first proposal hands the L2
 * contracts to the executor, token holders change the quorum and the request fee through the L1 vote,
 * the timelock and the bridge, the nodes go on answering under the new quorum, and what must not
 * change L2 does not. The last test restores the parameters, so the node tests that follow run as before.
 */
export function describeGovernance(context: () => GovernanceSuiteContext): void {
  describe("governance by the primary token, from the L1 vote to the L2 contracts", function () {
    let projectRoot: string;
    const lines: string[] = [];
    const deployer = devAccount(0);
    const holder = devAccount(NETWORK_ACCOUNTS.tokenHolder);

    before(async function () {
      // The CLI reads the stack file of its project: a folder of the test's own, so a running `npm start` is never touched.
      projectRoot = await mkdtemp(path.join(tmpdir(), "gov-e2e-"));
      await writeStackFile(stackFilePath(projectRoot), context().stack);
    });
    after(async function () {
      await rm(projectRoot, { recursive: true, force: true });
    });

    const addresses = () => devnetGovernanceAddresses(context().stack.contracts!);
    const l2Contract = (name: string) => context().stack.contracts!.l2![name];
    /** `npm run gov -- …args` as `account`, its exit code and the lines it printed. */
    const gov = async (account: string, ...args: string[]) => {
      lines.length = 0;
      const code = await runCli([...args, "--account", account], {
        projectRoot,
        env: {},
        print: (line) => lines.push(line),
        printError: (line) => lines.push(line),
      });
      return { code, output: lines.join("\n") };
    };
    const client = (signer: { privateKey: string }) =>
      new Governance({
        l1: new NonceManager(new Wallet(signer.privateKey, context().l1)),
        l2: context().l2,
        addresses: addresses(),
        l1BlockSeconds: DEVNET_L1_BLOCK_SECONDS,
      });
    const quorum = () => NodeRegistry__factory.connect(l2Contract("NodeRegistry"), context().l2).quorum();
    const requestFee = () => VerificationRegistry__factory.connect(l2Contract("VerificationRegistry"), context().l2).requestFee();
    const admins = () =>
      Promise.all(
        ["StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry"].map(
          (name) => new Contract(l2Contract(name), ADMIN_ABI, context().l2).getFunction("defaultAdmin")() as Promise<string>,
        ),
      );
    /** Moves the L1 past proposal `id`'s voting delay, or past its vote, or past its timelock delay. */
    const moveOn = async (id: bigint, past: "delay" | "vote" | "timelock") => {
      const status = await client(deployer).status(id);
      if (past === "delay") await advanceL1(context().l1, { blocks: Number(status.snapshotBlock - status.block) + 1 });
      if (past === "vote") await advanceL1(context().l1, { blocks: Number(status.deadlineBlock - status.block) + 1 });
      if (past === "timelock") await advanceL1(context().l1, { seconds: Number(status.eta! - status.time) + 1 });
    };

    it("hands the L2 contracts to governance with its first proposal, made and carried through with npm run gov", async function () {
      const executor = l2Contract("GovernanceExecutor");
      const registry = new Contract(l2Contract("VerificationRegistry"), ADMIN_ABI, context().l2);
      expect(await registry.getFunction("defaultAdmin")()).to.equal(deployer.address);
      expect((await registry.getFunction("pendingDefaultAdmin")())[0]).to.equal(executor);

      expect((await gov("deployer", "delegate")).code).to.equal(0);
      // The L1 stands still from the proposal's block until the checks below are done: voting opens two
      // blocks after the proposal's (a voting delay of one), and the devnet's L1 otherwise makes a block
      // every 2 s and one per transaction of its services, so "Pending" and a too-early vote would race them.
      await withL1StandingStill(context().l1, async (mineWhenSent) => {
        const proposed = await mineWhenSent(deployer.address, () =>
          gov("deployer", "propose", "accept-admin", "--note", "Hand the L2 protocol to governance"),
        );
        expect(proposed.code, proposed.output).to.equal(0);
        expect(proposed.output).to.match(
          /^Proposal 1 made:\nProposal 1: Pending — Hand the L2 protocol to governance\n {2}L2: StakedToken\.acceptDefaultAdminTransfer\(\)/,
        );
        const early = await gov("deployer", "vote", "1", "for");
        expect(early.code).to.equal(1);
        expect(early.output).to.match(/^error \[TOO_EARLY\]: Cannot vote: voting starts after block \d+, in \d+ blocks? \(~\d+ s\)$/);
        // Voters can see who holds which role before the handover (a role granted before it survives it).
        const roles = await gov("deployer", "roles");
        expect(roles.output).to.include(
          `VerificationRegistry ${l2Contract("VerificationRegistry")}: admin ${deployer.address} (handover pending to ${executor})`,
        );
        expect(roles.output).to.include(`  ATTESTATION_ROLE: ${l2Contract("AttestationVerifier")}`);
      });

      await moveOn(1n, "delay");
      expect((await gov("deployer", "vote", "1", "for")).code).to.equal(0);
      await moveOn(1n, "vote");
      expect((await gov("tokenHolder", "queue", "1")).code).to.equal(0);
      const waiting = await gov("tokenHolder", "execute", "1");
      expect([
        waiting.code,
        /^error \[TOO_EARLY\]: Cannot execute: queued: the timelock releases it in \d+ s/.test(waiting.output),
      ]).to.deep.equal([1, true]);
      // Passed and queued on L1: nothing has changed on L2 yet.
      expect(await admins()).to.deep.equal([deployer.address, deployer.address, deployer.address, deployer.address]);

      await moveOn(1n, "timelock");
      const executed = await gov("tokenHolder", "execute", "1");
      expect(executed.code, executed.output).to.equal(0);
      await eventually(admins, (all) => all.every((admin) => admin === executor), 60_000);
      const status = await gov("tokenHolder", "status", "1");
      expect(status.output).to.match(/L2 message 0x[0-9a-f]{64}: executed\n {2}next: executed on L1 and on L2$/);
    });

    it("changes the quorum and the request fee when token holders vote for it, and only once the L2 message is relayed", async function () {
      // The token holder proposes with its own tokens; the deployer's votes carry the quorum.
      await client(holder).delegate();
      const id = await client(holder).propose(
        [
          { kind: "set-quorum", quorum: 3n },
          { kind: "set-request-fee", fee: 2n * E18 },
        ],
        { note: "Quorum 3 and a cheaper request" },
      );
      await moveOn(id, "delay");
      await client(holder).vote(id, "for");
      await client(deployer).vote(id, "for");
      await moveOn(id, "vote");
      await client(holder).queue(id);
      await moveOn(id, "timelock");
      expect([await quorum(), await requestFee()]).to.deep.equal([2n, 10n * E18]);
      const { messageHash } = await client(holder).execute(id);
      await eventually(quorum, (value) => value === 3n, 60_000);
      expect(await requestFee()).to.equal(2n * E18);
      expect((await client(holder).status(id)).l2).to.deep.equal({ outcome: "executed", messageHash });
    });

    it("keeps the node network answering: a job opened after the change needs, and gets, three agreeing licenses", async function () {
      const { stack, l2 } = context();
      const [evm] = stack.demo!.evm;
      const result = await verifyOnChainAndByApi(stack, l2, {
        chain: "evm",
        user_address: evm.user_address,
        contract_address: evm.contract_address,
      });
      const registry = VerificationRegistry__factory.connect(l2Contract("VerificationRegistry"), l2);
      expect((await registry.getJob(result.jobId)).quorum).to.equal(3n);
      const [requested] = await registry.queryFilter(registry.filters.VerificationRequested(result.jobId));
      expect(requested.args.fee).to.equal(2n * E18);
      expect(result.onChain.balance).to.equal(BigInt(evm.balance));
      expect((await context().votesOn(result.jobId)).length).to.equal(3);
    });

    it("never acts on a proposal that lost its vote, a message from another L1 sender, or a second relay", async function () {
      const id = await client(holder).propose([{ kind: "set-quorum", quorum: 1n }]);
      await moveOn(id, "delay");
      await client(holder).vote(id, "for");
      await client(deployer).vote(id, "against");
      await moveOn(id, "vote");
      const defeated = await gov("tokenHolder", "queue", id.toString());
      expect(defeated.code).to.equal(1);
      expect(defeated.output).to.match(
        /^error \[WRONG_STATE\]: Cannot queue: the proposal was defeated \(for [\d,]+, against [\d,]+, abstain 0; quorum 40,000,000\)$/,
      );
      const governor = ProtocolGovernor__factory.connect(addresses().governor, new Wallet(holder.privateKey, context().l1));
      await expect(governor["queue(uint256)"](id)).to.be.revertedWithCustomError(governor, "GovernorUnexpectedProposalState");

      // Anyone can send the executor a message through the L1 messenger; it refuses all but the timelock's.
      const { l1, l2 } = context();
      const stranger = new Wallet(holder.privateKey, l1);
      const calls = l2CallsOf({ kind: "set-quorum", quorum: 1n }, addresses().l2);
      const message = encodeFunctionData({ abi: EXECUTOR_ABI, functionName: "execute", args: [calls, 2n ** 63n] });
      const messenger = new Contract(addresses().l1Messenger, L1_MESSENGER_ABI, stranger);
      const receipt = await (await messenger.getFunction("sendMessage")(addresses().executor, message, 1_000_000)).wait();
      const sent = receipt.logs
        .map((log: { topics: string[]; data: string }) => messenger.interface.parseLog(log))
        .find((event: { name: string } | null) => event?.name === "SentMessage");
      const messageHash = crossDomainMessageHash({
        nonce: sent.args.messageNonce,
        sender: sent.args.sender,
        target: sent.args.target,
        value: 0n,
        gasLimit: sent.args.gasLimit,
        message: sent.args.message as Hex,
      });
      const l2Messenger = new Contract(addresses().l2Messenger, L2_MESSENGER_ABI, l2);
      await eventually(
        () => l2Messenger.getFunction("failedMessages")(messageHash) as Promise<boolean>,
        (failed) => failed,
        60_000,
      );
      expect(await quorum()).to.equal(3n);

      // The relayed message of the passed proposal, relayed again by hand, is refused by the L2 messenger.
      const passed = (await client(holder).list()).find(
        (status) => status.l2?.outcome === "executed" && status.changes.some((change) => change.includes("setQuorum(3)")),
      )!;
      const relayer = new Wallet(holder.privateKey, l2);
      const l1Receipt = await findSentMessage(context().l1, addresses().timelock, addresses().l1Messenger, passed.l2!.messageHash);
      const replay = new Contract(addresses().l2Messenger, L2_MESSENGER_ABI as unknown as string[], relayer).getFunction("relayMessage");
      const refusal = await replay(
        l1Receipt.nonce,
        l1Receipt.sender,
        l1Receipt.target,
        l1Receipt.value,
        l1Receipt.gasLimit,
        l1Receipt.message,
      ).then(
        () => undefined,
        (error: Error) => error,
      );
      // Relayed once, as the L2 messenger records; the executor has run the batch and would not run it again.
      expect(refusal?.message).to.match(/message cannot be replayed/);
      expect(await l2Messenger.getFunction("successfulMessages")(passed.l2!.messageHash)).to.equal(true);
      const batch = decodeFunctionData({ abi: EXECUTOR_ABI, data: l1Receipt.message });
      const executor = new Contract(addresses().executor, ["function batchState(bytes32) view returns (uint8)"], l2);
      expect(await executor.getFunction("batchState")(batchHash(batch.args[0], batch.args[1]))).to.equal(1n);
      expect([await quorum(), await requestFee()]).to.deep.equal([3n, 2n * E18]);
    });

    it("restores quorum 2 and the request fee through governance (the node tests that follow expect them)", async function () {
      const { stack } = context();
      await passOnDevnet({
        l1: stack.l1!,
        l2: stack.l2!,
        voter: deployer,
        addresses: addresses(),
        changes: [
          { kind: "set-quorum", quorum: 2n },
          { kind: "set-request-fee", fee: 10n * E18 },
        ],
        done: async () => (await quorum()) === 2n,
      });
      expect(await requestFee()).to.equal(10n * E18);
    });
  });
}

/** The message the L1 messenger sent (in a transaction of `timelock`'s) whose L2 hash is `messageHash`. */
async function findSentMessage(l1: JsonRpcProvider, timelock: string, l1Messenger: string, messageHash: string) {
  const messenger = new Interface(L1_MESSENGER_ABI);
  const logs = await l1.getLogs({ address: l1Messenger, topics: [messenger.getEvent("SentMessage")!.topicHash], fromBlock: 0 });
  for (const log of logs) {
    const event = messenger.parseLog(log)!;
    const sent = {
      nonce: event.args.messageNonce as bigint,
      sender: event.args.sender as Address,
      target: event.args.target as Address,
      value: 0n,
      gasLimit: event.args.gasLimit as bigint,
      message: event.args.message as Hex,
    };
    if (sent.sender.toLowerCase() === timelock.toLowerCase() && crossDomainMessageHash(sent) === messageHash) return sent;
  }
  throw new Error(`no message ${messageHash} from the timelock`);
}
