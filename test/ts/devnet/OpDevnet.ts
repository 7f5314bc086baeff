import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import { expect } from "chai";
import {
  concat,
  Contract,
  getCreateAddress,
  Interface,
  keccak256,
  parseEther,
  toBeHex,
  Wallet,
  ZeroAddress,
  zeroPadValue,
  type TransactionReceipt,
} from "ethers";

import { loadParameters } from "../../../src/deploy/parameters.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { depositFromLog, depositHash, TRANSACTION_DEPOSITED_TOPIC } from "../../../src/devnet/op/deposit-transaction.ts";
import { DepositRelay } from "../../../src/devnet/op/deposit-relay.ts";
import { subscribeNewHeads } from "../../../src/devnet/op/new-heads.ts";
import { opArtifact } from "../../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import { devnetProvider, type OpDevnet } from "../../../src/devnet/op-devnet.ts";
import { DEVNET_GOVERNANCE_GUARDIAN } from "../../../src/devnet/local-stack.ts";
import { eventually, inOneL1Block, startTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";

const abi = (name: string) => new Interface(opArtifact(name).abi);

describe("devnet: local OP stack", function () {
  this.timeout(180_000);
  let net: TestDevnet;

  before(async function () {
    net = await startTestDevnet({ deploy: true });
  });
  after(async function () {
    const errors = net?.serviceErrors ?? [];
    await net?.stop();
    expect(errors, "the relay and the proposer never failed").to.deep.equal([]);
  });

  describe("chains and OP contracts", function () {
    it("runs L1 on chain 900 and L2 on chain 901 with 2-second blocks and a 30M gas limit", async function () {
      const { devnet } = net;
      expect((await devnet.l1Provider.getNetwork()).chainId).to.equal(900n);
      expect((await devnet.l2Provider.getNetwork()).chainId).to.equal(901n);
      const first = await devnet.l2Provider.getBlock("latest");
      const began = Date.now();
      // Two more blocks, and how long they took: 2 s blocks, not one per transaction.
      await eventually(
        () => devnet.l2Provider.getBlockNumber(),
        (number) => number >= first!.number + 2,
        10_000,
      );
      expect(Date.now() - began).to.be.at.least(2_000);
      const later = await devnet.l2Provider.getBlock("latest");
      const previous = await devnet.l2Provider.getBlock(later!.number - 1);
      expect(later!.timestamp - previous!.timestamp).to.equal(2);
      expect(later!.gasLimit).to.equal(30_000_000n);
    });

    it("has the L1 contracts of an OP chain initialized against each other", async function () {
      const { devnet } = net;
      const l1 = devnet.l1Contracts;
      const at = (name: string, address: string) => new Contract(address, abi(name), devnet.l1Provider);
      const portal = at("OptimismPortal", l1.OptimismPortal);
      expect(await portal.getFunction("l2Oracle")()).to.equal(l1.L2OutputOracle);
      expect(await portal.getFunction("systemConfig")()).to.equal(l1.SystemConfig);
      expect(await portal.getFunction("paused")()).to.equal(false);
      expect(await portal.getFunction("version")()).to.match(/^2\./); // the output-oracle portal the SDK proves against
      const messenger = at("L1CrossDomainMessenger", l1.L1CrossDomainMessenger);
      expect(await messenger.getFunction("portal")()).to.equal(l1.OptimismPortal);
      expect(await messenger.getFunction("otherMessenger")()).to.equal(L2_PREDEPLOYS.L2CrossDomainMessenger);
      const bridge = at("L1StandardBridge", l1.L1StandardBridge);
      expect(await bridge.getFunction("messenger")()).to.equal(l1.L1CrossDomainMessenger);
      expect(await bridge.getFunction("otherBridge")()).to.equal(L2_PREDEPLOYS.L2StandardBridge);
      const systemConfig = at("SystemConfig", l1.SystemConfig);
      expect(await systemConfig.getFunction("gasLimit")()).to.equal(30_000_000n);
      expect(await systemConfig.getFunction("optimismPortal")()).to.equal(l1.OptimismPortal);
      const oracle = at("L2OutputOracle", l1.L2OutputOracle);
      expect(await oracle.getFunction("proposer")()).to.equal(devnet.accounts.opProposer.address);
      expect(await oracle.getFunction("finalizationPeriodSeconds")()).to.equal(devnet.finalizationPeriodSeconds);
      const factory = at("OptimismMintableERC20Factory", l1.OptimismMintableERC20Factory);
      expect(await factory.getFunction("bridge")()).to.equal(l1.L1StandardBridge);
      const addressManager = at("AddressManager", l1.AddressManager);
      expect(await addressManager.getFunction("getAddress")("OVM_L1CrossDomainMessenger")).to.equal(l1.L1CrossDomainMessenger);
    });

    it("has the L2 predeploys initialized against the L1 contracts", async function () {
      const { devnet } = net;
      const at = (name: keyof typeof L2_PREDEPLOYS) => new Contract(L2_PREDEPLOYS[name], abi(name), devnet.l2Provider);
      expect(await at("L2CrossDomainMessenger").getFunction("otherMessenger")()).to.equal(devnet.l1Contracts.L1CrossDomainMessenger);
      expect(await at("L2StandardBridge").getFunction("otherBridge")()).to.equal(devnet.l1Contracts.L1StandardBridge);
      expect(await at("L2ERC721Bridge").getFunction("otherBridge")()).to.equal(devnet.l1Contracts.L1ERC721Bridge);
      expect(await at("OptimismMintableERC20Factory").getFunction("bridge")()).to.equal(L2_PREDEPLOYS.L2StandardBridge);
      expect(await devnet.l2Provider.getCode(L2_PREDEPLOYS.L1Block)).to.not.equal("0x");
      expect(await devnet.l2Provider.getCode(L2_PREDEPLOYS.L2ToL1MessagePasser)).to.not.equal("0x");
    });

    it("has a working Multicall3 at its canonical address on both chains", async function () {
      const { devnet } = net;
      const multicallAbi = ["function getChainId() view returns (uint256)", "function getEthBalance(address) view returns (uint256)"];
      for (const [provider, chainId] of [
        [devnet.l1Provider, 900n],
        [devnet.l2Provider, 901n],
      ] as const) {
        const multicall = new Contract(MULTICALL3_ADDRESS, multicallAbi, provider);
        expect(await multicall.getFunction("getChainId")()).to.equal(chainId);
        const account = devAccount(3).address;
        expect(await multicall.getFunction("getEthBalance")(account)).to.equal(await provider.getBalance(account));
      }
    });

    it("posts L2 output roots to L1 as the L2 advances", async function () {
      const { devnet } = net;
      const oracle = new Contract(devnet.l1Contracts.L2OutputOracle, abi("L2OutputOracle"), devnet.l1Provider);
      const latestBefore: bigint = await oracle.getFunction("latestBlockNumber")();
      const latest = await eventually(
        async (): Promise<bigint> => oracle.getFunction("latestBlockNumber")(),
        (number) => number > latestBefore,
        20_000,
      );
      // The root posted is the one the SDK rebuilds from the L2 block and the message passer's storage.
      const index: bigint = await oracle.getFunction("getL2OutputIndexAfter")(latest);
      const output = await oracle.getFunction("getL2Output")(index);
      const { computeOutputRoot } = await import("../../../src/devnet/op/output-proposer.ts");
      expect(output.outputRoot).to.equal(await computeOutputRoot(devnet.l2Provider, latest));
    });
  });

  describe("deployment dry run (modules L1 and L2 with the devnet parameter files)", function () {
    it("creates the L2 primary token through the factory predeploy, paired with the L1 token for the standard bridge", async function () {
      const { devnet, deployment } = net;
      const l2Token = new Contract(deployment!.l2.PrimaryToken, abi("OptimismMintableERC20"), devnet.l2Provider);
      expect(await l2Token.getFunction("remoteToken")()).to.equal(deployment!.l1PrimaryToken);
      expect(await l2Token.getFunction("bridge")()).to.equal(L2_PREDEPLOYS.L2StandardBridge);
      expect(await l2Token.getFunction("decimals")()).to.equal(18n);
      const l1Token = new Contract(
        deployment!.l1PrimaryToken,
        ["function symbol() view returns (string)", "function totalSupply() view returns (uint256)"],
        devnet.l1Provider,
      );
      expect(await l2Token.getFunction("symbol")()).to.equal(await l1Token.getFunction("symbol")());
      expect(await l1Token.getFunction("totalSupply")()).to.equal(10n ** 27n);
      expect(await l2Token.getFunction("totalSupply")()).to.equal(0n); // L2 supply only ever comes over the bridge
    });

    it("wires the L2 contracts to the bridged token and to each other, with the parameters of devnetL2.json", async function () {
      const { devnet, deployment } = net;
      const l2 = deployment!.l2;
      const deployer = devnet.accounts.deployer.address;
      const read = (address: string, signature: string, ...args: unknown[]) =>
        new Contract(address, [signature], devnet.l2Provider).getFunction(signature.split(" ")[1].split("(")[0])(...args);
      expect(await read(l2.StakedToken, "function PRIMARY_TOKEN() view returns (address)")).to.equal(l2.PrimaryToken);
      expect(await read(l2.NodeLicense, "function PAYMENT_TOKEN() view returns (address)")).to.equal(l2.PrimaryToken);
      expect(await read(l2.NodeRegistry, "function quorum() view returns (uint256)")).to.equal(2n);
      // The license contract tells this node registry of every transfer (so its delegations end with one).
      expect(await read(l2.NodeLicense, "function nodeRegistry() view returns (address)")).to.equal(l2.NodeRegistry);
      const hasRole = "function hasRole(bytes32, address) view returns (bool)";
      const protocolRole = await read(l2.StakedToken, "function PROTOCOL_ROLE() view returns (bytes32)");
      expect(await read(l2.StakedToken, hasRole, protocolRole, l2.VerificationRegistry)).to.equal(true);
      const recorderRole = await read(l2.NodeRegistry, "function RECORDER_ROLE() view returns (bytes32)");
      expect(await read(l2.NodeRegistry, hasRole, recorderRole, l2.VerificationRegistry)).to.equal(true);
      // The reward pools read the registry's epochs; the deployer (devnetL2.json's rewardsFunder) funds them.
      expect(await read(l2.RewardPools, "function REGISTRY() view returns (address)")).to.equal(l2.VerificationRegistry);
      const funderRole = await read(l2.RewardPools, "function REWARDS_FUNDER_ROLE() view returns (bytes32)");
      expect(await read(l2.RewardPools, hasRole, funderRole, deployer)).to.equal(true);
      // Every admin role is on its way to the governance executor, which obeys only the L1 timelock; the
      // deployer keeps it until governance's first proposal accepts it.
      expect(await read(l2.GovernanceExecutor, "function L1_TIMELOCK() view returns (address)")).to.equal(deployment!.l1.Timelock);
      expect(await read(l2.GovernanceExecutor, "function MESSENGER() view returns (address)")).to.equal(
        "0x4200000000000000000000000000000000000007",
      );
      expect(l2.adminHandovers.map((handover) => [handover.contract, handover.newAdmin])).to.deep.equal(
        [l2.StakedToken, l2.NodeLicense, l2.NodeRegistry, l2.VerificationRegistry, l2.RewardPools].map((contract) => [
          contract,
          l2.GovernanceExecutor,
        ]),
      );
      expect(await read(l2.VerificationRegistry, "function defaultAdmin() view returns (address)")).to.equal(deployer);
      // The stack file's governance guardian is the one the devnet's parameter file names.
      const governor = new Contract(deployment!.l1.Governor, ["function proposalGuardian() view returns (address)"], devnet.l1Provider);
      expect(await governor.getFunction("proposalGuardian")()).to.equal(devAccount(DEVNET_GOVERNANCE_GUARDIAN).address);
    });

    it("refuses a live parameter file whose accounts are still the zero address", async function () {
      await expectRejection(loadParameters("l1Testnet", "L1"), /l1Testnet\.json: L1\.supplyRecipient must be a non-zero address/);
      await expectRejection(
        loadParameters("l2Testnet", "L2", { l1PrimaryToken: devAccount(1).address }),
        /L2\.rewardsFunder must be a non-zero address/,
      );
    });
  });

  describe("deposit relay", function () {
    it("relays each deposit exactly once and in L1 order, across a stop, a restart and a lost cursor", async function () {
      const { devnet, stateDir } = net;
      const portalAddress = devnet.l1Contracts.OptimismPortal;
      const senders = [devAccount(4), devAccount(5)].map((account) => new Wallet(account.privateKey, devnet.l1Provider));
      const l2Balance = (address: string) => devnet.l2Provider.getBalance(address);
      const before = await Promise.all(senders.map((sender) => l2Balance(sender.address)));

      // The relay is down while three deposits are made straight to the portal.
      await devnet.relay.stop();
      const portal = (sender: Wallet) => new Contract(portalAddress, abi("OptimismPortal"), sender);
      const amounts = [parseEther("0.3"), parseEther("0.5"), parseEther("0.7")];
      const receipts: TransactionReceipt[] = [];
      for (const [i, amount] of amounts.entries()) {
        const sender = senders[i % 2];
        const tx = await portal(sender).getFunction("depositTransaction")(sender.address, 0n, 100_000n, false, "0x", {
          value: amount,
          gasLimit: 500_000n, // the portal burns L1 gas to pay for L2 gas by a block-dependent amount: no exact estimate
        });
        receipts.push(await tx.wait());
      }
      const logs = receipts.flatMap((receipt) => receipt.logs.filter((log) => log.topics[0] === TRANSACTION_DEPOSITED_TOPIC));
      // Nothing brings them to L2 while the relay is down, though the L2 has gone past them: L1Block knows
      // the last deposit's L1 block (op-node puts a block's deposits in the L2 block that learns of it,
      // right after its attributes), and one more L2 block is mined (the relay sends a deposit after its
      // block's attributes, within a poll interval: a running relay's would be in that block at the latest).
      await devnet.l1Attributes.caughtUp(receipts.at(-1)!.blockNumber);
      await l2BlocksMined(devnet, 1);
      for (const log of logs) {
        const l2Tx = await devnet.l2Provider.send("eth_getTransactionByHash", [depositHash(depositFromLog(log))]);
        expect(l2Tx, "a deposit reached L2 while the relay was down").to.equal(null);
      }
      expect(await l2Balance(senders[0].address)).to.equal(before[0]);
      expect(await l2Balance(senders[1].address)).to.equal(before[1]);

      // A relay whose L2 is unreachable fails the pass without moving its state past the deposits.
      const cursorFile = path.join(stateDir, "deposit-relay.json");
      const stateBefore = await readFile(cursorFile, "utf8");
      const unreachableL2 = devnetProvider("http://127.0.0.1:9", 901);
      const broken = new DepositRelay({ l1: devnet.l1Provider, l2: unreachableL2, portal: portalAddress, fromBlock: 0, cursorFile });
      const failure = await broken.relayPending().then(
        () => undefined,
        (error: Error) => error,
      );
      unreachableL2.destroy();
      expect(failure, "a pass against an unreachable L2 fails").to.be.instanceOf(Error);
      expect(await readFile(cursorFile, "utf8")).to.equal(stateBefore);

      // A new relay process with the same cursor file picks them up.
      const restarted = new DepositRelay({
        l1: devnet.l1Provider,
        l2: devnet.l2Provider,
        portal: portalAddress,
        fromBlock: 0,
        cursorFile: path.join(stateDir, "deposit-relay.json"),
      });
      expect(await restarted.relayPending()).to.equal(3);
      expect(await l2Balance(senders[0].address)).to.equal(before[0] + amounts[0] + amounts[2]);
      expect(await l2Balance(senders[1].address)).to.equal(before[1] + amounts[1]);

      // They landed in L1 order, each as the deposit transaction derived from its event.
      const positions = [];
      for (const log of logs) {
        const deposit = depositFromLog(log);
        const l2Tx = await devnet.l2Provider.send("eth_getTransactionByHash", [depositHash(deposit)]);
        expect(l2Tx.type).to.equal("0x7e");
        expect(l2Tx.sourceHash).to.equal(deposit.sourceHash);
        positions.push(Number(l2Tx.blockNumber) * 1_000_000 + Number(l2Tx.transactionIndex));
      }
      expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));

      // A relay that lost its cursor rescans everything and sends nothing twice.
      const amnesiac = new DepositRelay({
        l1: devnet.l1Provider,
        l2: devnet.l2Provider,
        portal: portalAddress,
        fromBlock: 0,
        cursorFile: path.join(stateDir, "missing", "cursor.json"),
      });
      expect(await amnesiac.relayPending()).to.equal(0);
      expect(amnesiac.skippedCount).to.be.greaterThanOrEqual(3);
      // Nor did it send one without counting it: an L2 block is mined after its pass, with whatever it sent.
      await l2BlocksMined(devnet, 1);
      expect(await l2Balance(senders[0].address)).to.equal(before[0] + amounts[0] + amounts[2]);
      expect(await l2Balance(senders[1].address)).to.equal(before[1] + amounts[1]);

      // The devnet's own relay, stopped, still runs a pass when asked, and carries on from its state
      // without resending.
      expect(await devnet.relay.relayPending()).to.equal(0);
      expect(devnet.relay.skippedCount).to.be.greaterThanOrEqual(3);
      // Restarted, its loop's first pass (from the L1 head, past every deposit) sends nothing, and an L2 block
      // is mined after that pass, with whatever it sent.
      const firstPass = devnet.relay.nextPass();
      devnet.relay.start();
      expect(await firstPass).to.equal(0);
      await l2BlocksMined(devnet, 1);
      expect(devnet.relay.relayedCount).to.equal(0);
      expect(await l2Balance(senders[0].address)).to.equal(before[0] + amounts[0] + amounts[2]);
      expect(await l2Balance(senders[1].address)).to.equal(before[1] + amounts[1]);
    });

    it("derives deposits as the OP spec says: source hash, mint, value, recipient, creation, two in one L1 block", async function () {
      const { devnet } = net;
      const sender = new Wallet(devAccount(4).privateKey, devnet.l1Provider);
      const recipient = Wallet.createRandom().address;
      const portal = new Contract(devnet.l1Contracts.OptimismPortal, abi("OptimismPortal"), sender);
      const senderBefore = await devnet.l2Provider.getBalance(sender.address);
      const creationNonce = await devnet.l2Provider.getTransactionCount(sender.address);
      // A value transfer that mints more than it sends, and a contract creation (init code returning
      // the one-byte runtime 0x00), both in one L1 block.
      const initCode = "0x600160008160008239f3"; // PUSH1 1 PUSH1 0 DUP2 PUSH1 0 DUP3 CODECOPY RETURN: returns its own first byte
      const nonce = await devnet.l1Provider.getTransactionCount(sender.address);
      const [transfer, creation] = await inOneL1Block(devnet, async () => [
        await portal.getFunction("depositTransaction")(recipient, parseEther("0.2"), 100_000n, false, "0x", {
          value: parseEther("0.5"),
          gasLimit: 1_000_000n,
          nonce,
        }),
        await portal.getFunction("depositTransaction")(ZeroAddress, 0n, 200_000n, true, initCode, {
          gasLimit: 1_500_000n,
          nonce: nonce + 1,
        }),
      ]);
      const [transferReceipt, creationReceipt] = [(await transfer.wait())!, (await creation.wait())!];
      expect(creationReceipt.blockHash).to.equal(transferReceipt.blockHash);

      const expectations = [
        {
          receipt: transferReceipt,
          to: recipient.toLowerCase(),
          mint: parseEther("0.5"),
          value: parseEther("0.2"),
          gas: 100_000n,
          input: "0x",
        },
        { receipt: creationReceipt, to: undefined, mint: 0n, value: 0n, gas: 200_000n, input: initCode },
      ];
      const l2Positions = [];
      for (const expected of expectations) {
        const log = expected.receipt.logs.find((entry: { topics: readonly string[] }) => entry.topics[0] === TRANSACTION_DEPOSITED_TOPIC)!;
        // OP deposit spec: user deposits have source-hash domain 0 over (L1 block hash, block-wide log index).
        const sourceHash = keccak256(concat([zeroPadValue("0x", 32), keccak256(concat([log.blockHash, toBeHex(log.index, 32)]))]));
        const l2Tx = await eventually(
          () => devnet.l2Provider.send("eth_getTransactionByHash", [depositHash(depositFromLog(log))]),
          (tx) => tx !== null && tx.blockNumber !== null,
        );
        expect(l2Tx.type).to.equal("0x7e");
        expect(l2Tx.sourceHash).to.equal(sourceHash);
        expect(l2Tx.from).to.equal(sender.address.toLowerCase());
        expect(l2Tx.to).to.equal(expected.to);
        expect(BigInt(l2Tx.mint)).to.equal(expected.mint);
        expect(BigInt(l2Tx.value)).to.equal(expected.value);
        expect(BigInt(l2Tx.gas)).to.equal(expected.gas);
        expect(l2Tx.input).to.equal(expected.input);
        l2Positions.push(Number(l2Tx.blockNumber) * 1_000_000 + Number(l2Tx.transactionIndex));
      }
      expect(l2Positions[0]).to.be.lessThan(l2Positions[1]); // L1 log order kept within one L1 block
      // Mint credited, value moved, the contract created at the sender's next L2 nonce.
      expect(await devnet.l2Provider.getBalance(recipient)).to.equal(parseEther("0.2"));
      expect(await devnet.l2Provider.getBalance(sender.address)).to.equal(senderBefore + parseEther("0.3"));
      const created = getCreateAddress({ from: sender.address, nonce: creationNonce + 1 });
      expect(await devnet.l2Provider.getCode(created)).to.equal("0x60");
    });

    it("credits the mint of a deposit whose value exceeds it, as op-geth fails it, without blocking later deposits", async function () {
      const { devnet, stateDir } = net;
      // A fresh account: funded on L1, nothing on L2, sends 5 ETH on L2 while minting 1.
      const fresh = Wallet.createRandom(devnet.l1Provider);
      const funder = new Wallet(devAccount(4).privateKey, devnet.l1Provider);
      await (await funder.sendTransaction({ to: fresh.address, value: parseEther("2") })).wait();
      const portal = new Contract(devnet.l1Contracts.OptimismPortal, abi("OptimismPortal"), fresh);
      await (
        await portal.getFunction("depositTransaction")(fresh.address, parseEther("5"), 100_000n, false, "0x", {
          value: parseEther("1"),
          gasLimit: 1_000_000n,
        })
      ).wait();
      const later = Wallet.createRandom().address;
      await (
        await new Contract(devnet.l1Contracts.OptimismPortal, abi("OptimismPortal"), funder).getFunction("depositTransaction")(
          later,
          parseEther("0.1"),
          100_000n,
          false,
          "0x",
          { value: parseEther("0.1"), gasLimit: 1_000_000n },
        )
      ).wait();
      await eventually(
        () => devnet.l2Provider.getBalance(later),
        (balance) => balance === parseEther("0.1"),
      );
      expect(await devnet.l2Provider.getBalance(fresh.address)).to.equal(parseEther("1"));
      expect(devnet.relay.failedCount).to.equal(1);

      // A restarted relay remembers it: the mint is not credited twice.
      const restarted = new DepositRelay({
        l1: devnet.l1Provider,
        l2: devnet.l2Provider,
        portal: devnet.l1Contracts.OptimismPortal,
        fromBlock: 0,
        cursorFile: path.join(stateDir, "deposit-relay.json"),
      });
      await devnet.relay.stop();
      const state = JSON.parse(await readFile(path.join(stateDir, "deposit-relay.json"), "utf8"));
      await writeFile(path.join(stateDir, "deposit-relay.json"), JSON.stringify({ ...state, nextBlock: 0, anchor: null }));
      expect(await restarted.relayPending()).to.equal(0);
      expect(restarted.failedCount).to.equal(0);
      expect(await devnet.l2Provider.getBalance(fresh.address)).to.equal(parseEther("1"));
      devnet.relay.start();
    });

    it("does not trust a state file of another chain (same portal address, other block hashes)", async function () {
      const { devnet, stateDir } = net;
      const latest = await devnet.l1Provider.getBlockNumber();
      const foreign = path.join(stateDir, "foreign-state.json");
      // An earlier devnet had scanned further than this chain has blocks, past a deposit yet to come.
      await writeFile(
        foreign,
        JSON.stringify({ portal: devnet.l1Contracts.OptimismPortal, nextBlock: latest + 50, anchor: keccak256("0x01"), failed: [] }),
      );
      const relay = new DepositRelay({
        l1: devnet.l1Provider,
        l2: devnet.l2Provider,
        portal: devnet.l1Contracts.OptimismPortal,
        fromBlock: 0,
        cursorFile: foreign,
      });
      expect(await relay.relayPending()).to.equal(0);
      expect(relay.skippedCount, "it rescanned this chain from its start").to.be.greaterThanOrEqual(5);
      expect(JSON.parse(await readFile(foreign, "utf8")).nextBlock).to.be.within(latest + 1, latest + 3);
    });

    it("refuses to derive a deposit of an unknown version instead of guessing its layout", async function () {
      const log = {
        topics: [TRANSACTION_DEPOSITED_TOPIC, ZeroAddress, ZeroAddress, "0x" + "0".repeat(63) + "1"],
        data: "0x",
        blockNumber: 1,
        index: 0,
      };
      expect(() => depositFromLog(log as never)).to.throw(/unknown deposit version 1/);
    });
  });
});

/**
 * Resolves once the L2 has mined `count` blocks after this call, followed over a `newHeads` subscription:
 * whatever was sent to the L2 before the call is in the first of them (anvil mines every transaction
 * waiting in its pool into its next block).
 */
async function l2BlocksMined(devnet: OpDevnet, count: number): Promise<void> {
  let highest = -1;
  let target = Number.POSITIVE_INFINITY;
  let reach: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const reached = new Promise<void>((resolve, reject) => {
    reach = resolve;
    fail = reject;
  });
  reached.catch(() => undefined); // awaited below; a socket that closes first is reported there
  const subscription = subscribeNewHeads(
    devnet.l2.wsUrl,
    (blockNumber) => {
      highest = Math.max(highest, blockNumber);
      if (highest >= target) reach();
    },
    fail,
  );
  try {
    await subscription.ready;
    // Read once the subscription is up, so that every block after it is announced.
    target = (await devnet.l2Provider.getBlockNumber()) + count;
    if (highest >= target) return;
    await reached;
  } finally {
    subscription.close();
  }
}

async function expectRejection(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: Error) => reason,
  );
  expect(error, "expected a rejection").to.be.instanceOf(Error);
  expect(error!.message).to.match(message);
}
