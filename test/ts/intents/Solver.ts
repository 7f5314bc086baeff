import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { Bridge } from "@avn/bridge";
import { expect } from "chai";
import { Contract, type JsonRpcProvider, MaxUint256, NonceManager, parseEther, Wallet } from "ethers";
import type { Address } from "viem";

import { decodeOriginData, encodeOrderData, NATIVE_TOKEN, ORDER_DATA_TYPE, OrderStatus, type OrderTerms } from "@avn/protocol/intents";
import type { DestinationSettler, L1OriginSettler, L2DestinationSettler, OriginSettler } from "../../../typechain-types/index.ts";
import { runCli } from "../../../src/bridge/cli.ts";
import { contractAt } from "../../../src/common/artifacts.ts";
import { writeStackFile } from "../../../src/common/stack-file.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { spawnScript } from "../../../src/devnet/script-process.ts";
import { fundSolver, SOLVER_ACCOUNT, startStackSolver, type StackSolver } from "../../../src/devnet/stack-solver.ts";
import { startTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { logFileEnd, nodeLogLine, type NodeLogEntry } from "../../helpers/network.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
const ERC20 = ["function balanceOf(address) view returns (uint256)", "function approve(address,uint256) returns (bool)"];

/**
 * The solver as the local stack runs it (`npm run solver`, its own process) on a devnet of its own: it fills the
 * orders its policy finds profitable, settles fast withdrawals on proofs and fast deposits on reports relayed through
 * the OP messenger, survives being killed between a fill and its settlement without filling twice, and moves its
 * earnings back to L1 through the standard bridge.
 */
describe("Solver: fills, settles with proofs or reports, restarts from its journal, rebalances", function () {
  this.timeout(600_000);
  let test: TestDevnet;
  let l1: JsonRpcProvider;
  let l2: JsonRpcProvider;
  let origin: OriginSettler;
  let destination: DestinationSettler;
  let user: NonceManager;
  let userKey: string;
  let solver: StackSolver;
  let l1Token: string;
  let l2Token: string;
  const recipient = Wallet.createRandom().address as Address;

  const start = async (env: Record<string, string> = {}) => {
    const logFile = path.join(test.stateDir, "solver.log");
    solver = await startStackSolver({
      projectRoot,
      stateDir: path.join(test.stateDir, "solver"),
      logFile,
      l1: test.devnet.l1,
      l2: test.devnet.l2,
      originSettler: test.deployment!.l2.OriginSettler,
      l1OriginSettler: test.deployment!.l1.OriginSettler,
      opContracts: test.devnet.l1Contracts,
      env,
    });
  };
  /** Restarts the solver process on the same journal (its state directory is kept). */
  const restart = async () => {
    const logFile = solver.logFile;
    const from = await logFileEnd(logFile);
    solver = { ...solver, process: await spawnScript({ projectRoot, script: "solver.ts", env: solver.env, logFile }) };
    await logLine(from, (entry) => entry.msg === "solver starting");
  };
  const logLine = (from: number, accept: (entry: NodeLogEntry) => boolean) =>
    nodeLogLine(solver?.logFile ?? path.join(test.stateDir, "solver.log"), from, accept, 120_000);

  const terms = (overrides: Partial<OrderTerms> = {}): OrderTerms => ({
    inputToken: l2Token as Address,
    inputAmount: parseEther("100"),
    outputToken: l1Token as Address,
    outputAmount: parseEther("99"),
    recipient,
    destinationChainId: BigInt(test.devnet.l1.chainId),
    ...overrides,
  });

  /** Opens an order from the user; returns its id and origin data. */
  async function open(t: OrderTerms) {
    const latest = await l2.getBlock("latest");
    const order = { fillDeadline: latest!.timestamp + 600, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(t) };
    const receipt = await (await origin.connect(user).open(order, { value: t.inputToken === NATIVE_TOKEN ? t.inputAmount : 0n })).wait();
    const event = receipt!.logs.map((log) => origin.interface.parseLog(log)).find((parsed) => parsed?.name === "Open")!;
    return { orderId: event.args.orderId as string, originData: event.args.resolvedOrder.fillInstructions[0].originData as string };
  }

  const fillsOf = async (orderId: string) => (await destination.queryFilter(destination.filters.Filled(orderId))).length;

  before(async function () {
    test = await startTestDevnet({ deploy: true });
    l1 = devnetProvider(test.devnet.l1.rpcUrl, test.devnet.l1.chainId);
    l2 = devnetProvider(test.devnet.l2.rpcUrl, test.devnet.l2.chainId);
    origin = contractAt<OriginSettler>("OriginSettler", test.deployment!.l2.OriginSettler, l2, "intents");
    destination = contractAt<DestinationSettler>("DestinationSettler", test.deployment!.l1.DestinationSettler, l1, "intents");
    l1Token = test.deployment!.l1PrimaryToken;
    l2Token = test.deployment!.l2.PrimaryToken;
    const deployer = test.devnet.accounts.deployer;
    const userWallet = Wallet.createRandom();
    userKey = userWallet.privateKey;
    user = new NonceManager(userWallet.connect(l2));
    // The user: ETH and primary tokens on the L2, the tokens through the standard bridge as anyone gets them.
    const bridge = await Bridge.connect(test.bridgeNetwork, deployer.privateKey);
    const deposit = await bridge.depositPrimaryToken(parseEther("10000"), { approve: true, recipient: userWallet.address });
    await bridge.waitFor(deposit, "RELAYED", { timeoutMs: 60_000 });
    const ether = await bridge.depositEth(parseEther("100"), userWallet.address);
    await bridge.waitFor(ether, "RELAYED", { timeoutMs: 60_000 });
    await (await new Contract(l2Token, ERC20, user).getFunction("approve")(origin.target, MaxUint256)).wait();
    await fundSolver({
      l1,
      bridgeNetwork: test.bridgeNetwork,
      deployer,
      solver: devAccount(SOLVER_ACCOUNT).address,
      l1PrimaryToken: l1Token,
    });
    await start();
  });

  after(async function () {
    await solver?.process.stop();
    l1?.destroy();
    l2?.destroy();
    await test?.stop();
  });

  it("fills a token order and an ETH order at once and settles each on a proof of its fill", async function () {
    const from = await logFileEnd(solver.logFile);
    const token = new Contract(l1Token, ERC20, l1);
    const l2Balance = new Contract(l2Token, ERC20, l2);
    const before = { tokens: (await token.balanceOf(recipient)) as bigint, eth: await l1.getBalance(recipient) };
    const solverL2Before = (await l2Balance.balanceOf(solver.account.address)) as bigint;
    const tokenOrder = await open(terms());
    const ethOrder = await open(
      terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: parseEther("1"), outputAmount: parseEther("0.99") }),
    );
    for (const { orderId } of [tokenOrder, ethOrder])
      await logLine(from, (entry) => entry.msg === "order settled" && entry.orderId === orderId);
    expect(await token.balanceOf(recipient)).to.equal(before.tokens + parseEther("99"));
    expect(await l1.getBalance(recipient)).to.equal(before.eth + parseEther("0.99"));
    expect(await origin.orderStatus(tokenOrder.orderId)).to.equal(BigInt(OrderStatus.settled));
    expect(await origin.orderStatus(ethOrder.orderId)).to.equal(BigInt(OrderStatus.settled));
    expect(await l2Balance.balanceOf(solver.account.address)).to.equal(solverL2Before + parseEther("100"));
    expect(await fillsOf(tokenOrder.orderId)).to.equal(1);
  });

  it("declines what its policy does not fill: a fee under 1%, a swap", async function () {
    const from = await logFileEnd(solver.logFile);
    const thin = await open(terms({ outputAmount: parseEther("99.5") }));
    const swap = await open(terms({ outputToken: NATIVE_TOKEN, outputAmount: parseEther("1") }));
    const thinLine = await logLine(from, (entry) => entry.msg === "order declined" && entry.orderId === thin.orderId);
    expect(thinLine.line.reason).to.equal("fee below 100 bps");
    const swapLine = await logLine(from, (entry) => entry.msg === "order declined" && entry.orderId === swap.orderId);
    expect(String(swapLine.line.reason)).to.match(/not like for like/);
    expect(await fillsOf(thin.orderId)).to.equal(0);
    expect(await origin.orderStatus(thin.orderId)).to.equal(BigInt(OrderStatus.open));
  });

  for (const moment of ["fill sent", "order filled"] as const) {
    it(`killed right after "${moment}", settles after a restart, and fills nothing twice`, async function () {
      const from = await logFileEnd(solver.logFile);
      const order = await open(terms({ inputAmount: parseEther("50"), outputAmount: parseEther("49") }));
      await logLine(from, (entry) => entry.msg === moment && entry.orderId === order.orderId);
      await solver.process.stop("SIGKILL");
      await restart();
      await logLine(from, (entry) => entry.msg === "order settled" && entry.orderId === order.orderId);
      expect(await fillsOf(order.orderId)).to.equal(1);
      expect(await origin.orderStatus(order.orderId)).to.equal(BigInt(OrderStatus.settled));
      expect(decodeOriginData(order.originData as `0x${string}`).recipient).to.equal(recipient);
    });
  }

  describe("fast deposits, L1 → L2", function () {
    let l1Origin: L1OriginSettler;
    let l2Destination: L2DestinationSettler;
    let l1User: NonceManager;
    const depositTerms = (overrides: Partial<OrderTerms> = {}): OrderTerms => ({
      inputToken: l1Token as Address,
      inputAmount: parseEther("100"),
      outputToken: l2Token as Address,
      outputAmount: parseEther("99"),
      recipient,
      destinationChainId: BigInt(test.devnet.l2.chainId),
      ...overrides,
    });

    before(async function () {
      l1Origin = contractAt<L1OriginSettler>("L1OriginSettler", test.deployment!.l1.OriginSettler!, l1, "intents");
      l2Destination = contractAt<L2DestinationSettler>("L2DestinationSettler", test.deployment!.l2.DestinationSettler, l2, "intents");
      l1User = new NonceManager(new Wallet(userKey, l1));
      const deployer = new NonceManager(new Wallet(test.devnet.accounts.deployer.privateKey, l1));
      await (await deployer.sendTransaction({ to: await l1User.getAddress(), value: parseEther("10") })).wait();
      const token = new Contract(l1Token, [...ERC20, "function transfer(address,uint256) returns (bool)"], deployer);
      await (await token.getFunction("transfer")(await l1User.getAddress(), parseEther("1000"))).wait();
      await (await new Contract(l1Token, ERC20, l1User).getFunction("approve")(l1Origin.target, MaxUint256)).wait();
    });

    async function openOnL1(t: OrderTerms) {
      const latest = await l1.getBlock("latest");
      const order = { fillDeadline: latest!.timestamp + 600, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(t) };
      const value = t.inputToken === NATIVE_TOKEN ? t.inputAmount : 0n;
      const receipt = await (await l1Origin.connect(l1User).open(order, { value })).wait();
      const event = receipt!.logs.map((log) => l1Origin.interface.parseLog(log)).find((parsed) => parsed?.name === "Open")!;
      return { orderId: event.args.orderId as string };
    }

    it("pays the recipient on the L2 at once, and is repaid on L1 when its report is relayed, across a kill", async function () {
      const from = await logFileEnd(solver.logFile);
      const l2TokenOf = new Contract(l2Token, ERC20, l2);
      const l1TokenOf = new Contract(l1Token, ERC20, l1);
      const before = { tokens: (await l2TokenOf.balanceOf(recipient)) as bigint, eth: await l2.getBalance(recipient) };
      const solverL1Before = (await l1TokenOf.balanceOf(solver.account.address)) as bigint;
      const tokenOrder = await openOnL1(depositTerms());
      const ethOrder = await openOnL1(
        depositTerms({
          inputToken: NATIVE_TOKEN,
          outputToken: NATIVE_TOKEN,
          inputAmount: parseEther("1"),
          outputAmount: parseEther("0.99"),
        }),
      );
      for (const { orderId } of [tokenOrder, ethOrder])
        await logLine(from, (entry) => entry.msg === "order filled" && entry.lane === "deposits" && entry.orderId === orderId);
      expect(await l2TokenOf.balanceOf(recipient)).to.equal(before.tokens + parseEther("99"));
      expect(await l2.getBalance(recipient)).to.equal(before.eth + parseEther("0.99"));
      expect(await l1Origin.orderStatus(tokenOrder.orderId)).to.equal(BigInt(OrderStatus.open));

      // Killed once a report is on its way: the restarted solver proves and finalizes it from its journal.
      await logLine(from, (entry) => entry.msg === "fills reported to L1");
      await solver.process.stop("SIGKILL");
      await restart();
      for (const { orderId } of [tokenOrder, ethOrder])
        await logLine(from, (entry) => entry.msg === "order settled" && entry.lane === "deposits" && entry.orderId === orderId);
      expect(await l1Origin.orderStatus(tokenOrder.orderId)).to.equal(BigInt(OrderStatus.settled));
      expect(await l1Origin.orderStatus(ethOrder.orderId)).to.equal(BigInt(OrderStatus.settled));
      expect(await l1TokenOf.balanceOf(solver.account.address)).to.equal(solverL1Before + parseEther("100"));
      for (const { orderId } of [tokenOrder, ethOrder])
        expect((await l2Destination.queryFilter(l2Destination.filters.Filled(orderId))).length).to.equal(1);
    });

    it("with a report delay, carries the fills of several orders in one report", async function () {
      await solver.process.stop();
      await start({ SOLVER_REPORT_DELAY_SECONDS: "6" });
      const from = await logFileEnd(solver.logFile);
      const reportsBefore = (await l2Destination.queryFilter(l2Destination.filters.FillsReported())).length;
      const orders = [
        await openOnL1(depositTerms({ inputAmount: parseEther("20"), outputAmount: parseEther("19.8") })),
        await openOnL1(
          depositTerms({
            inputToken: NATIVE_TOKEN,
            outputToken: NATIVE_TOKEN,
            inputAmount: parseEther("0.5"),
            outputAmount: parseEther("0.495"),
          }),
        ),
      ];
      const reported = await logLine(from, (entry) => entry.msg === "fills reported to L1");
      expect(reported.line.orders).to.equal(2);
      for (const { orderId } of orders)
        await logLine(from, (entry) => entry.msg === "order settled" && entry.lane === "deposits" && entry.orderId === orderId);
      const reports = await l2Destination.queryFilter(l2Destination.filters.FillsReported());
      expect(reports.slice(reportsBefore).map((event) => Number(event.args.count))).to.deep.equal([2]);
      // Back to the stack's setting for what follows.
      await solver.process.stop();
      await start();
    });
  });

  describe("the bridge CLI's fast-withdraw and fast-deposit", function () {
    let cliRoot: string;
    let out: string[];
    let err: string[];
    const cli = (...args: string[]) =>
      runCli(args, { projectRoot: cliRoot, env: {}, print: (line) => out.push(line), printError: (line) => err.push(line) });

    before(async function () {
      cliRoot = await mkdtemp(path.join(tmpdir(), "fast-withdraw-cli-"));
      await writeStackFile(path.join(cliRoot, ".devnet", "stack.json"), {
        l1: { chainId: test.devnet.l1.chainId, rpcUrl: test.devnet.l1.rpcUrl },
        l2: { chainId: test.devnet.l2.chainId, rpcUrl: test.devnet.l2.rpcUrl, wsUrl: test.devnet.l2.wsUrl },
        contracts: {
          l1: { ...test.devnet.l1Contracts, PrimaryToken: l1Token, OriginSettler: test.deployment!.l1.OriginSettler! },
          l2: { PrimaryToken: l2Token, OriginSettler: test.deployment!.l2.OriginSettler },
        },
        accounts: { user: { address: await user.getAddress(), privateKey: userKey } },
      });
    });
    beforeEach(function () {
      out = [];
      err = [];
    });
    after(async function () {
      await rm(cliRoot, { recursive: true, force: true });
    });

    it("withdraws the primary token and ETH in seconds, following each order until it is settled", async function () {
      const token = new Contract(l1Token, ERC20, l1);
      const address = await user.getAddress();
      const before = { tokens: (await token.balanceOf(address)) as bigint, eth: await l1.getBalance(address) };
      expect(await cli("fast-withdraw", "--amount", "5", "--account", "user", "--settled"), err.join("\n")).to.equal(0);
      expect(out.join("\n")).to.match(/Order 0x[0-9a-f]{64} opened: 5\.0 primary tokens escrowed on L2, 4\.95 to be paid on L1/);
      expect(out.at(-2)).to.match(/^Filled on L1 at /);
      expect(out.at(-1)).to.equal("Settled on L2: the solver was repaid from the escrow on a proof of its fill");
      expect(await token.balanceOf(address)).to.equal(before.tokens + parseEther("4.95"));
      out = [];
      expect(await cli("fast-withdraw", "--amount", "0.5", "--asset", "eth", "--account", "user"), err.join("\n")).to.equal(0);
      expect(out.at(-1)).to.match(/^Filled on L1 at /);
      expect(await l1.getBalance(address)).to.equal(before.eth + parseEther("0.495"));
      expect(out.join("\n")).to.not.include(userKey.slice(2));
    });

    it("deposits the primary token and ETH at the next L2 block, and follows a deposit until its report is relayed", async function () {
      const token = new Contract(l2Token, ERC20, l2);
      const address = await user.getAddress();
      const before = { tokens: (await token.balanceOf(address)) as bigint, eth: await l2.getBalance(address) };
      expect(await cli("fast-deposit", "--amount", "5", "--account", "user"), err.join("\n")).to.equal(0);
      expect(out.join("\n")).to.match(/Order 0x[0-9a-f]{64} opened: 5\.0 primary tokens escrowed on L1, 4\.95 to be paid on L2/);
      expect(out.at(-1)).to.match(/^Filled on L2 at /);
      expect(await token.balanceOf(address)).to.equal(before.tokens + parseEther("4.95"));
      out = [];
      expect(await cli("fast-deposit", "--amount", "0.5", "--asset", "eth", "--account", "user", "--settled"), err.join("\n")).to.equal(0);
      expect(out.at(-1)).to.equal("Settled on L1: the solver was repaid from the escrow on its report, relayed after the challenge period");
      expect(await l2.getBalance(address)).to.equal(before.eth + parseEther("0.495"));
    });

    it("refuses bad input and an amount beyond the balance before sending anything", async function () {
      const nonce = await l2.getTransactionCount(await user.getAddress());
      for (const [args, pattern] of [
        [["--fee-bps", "10000"], /^error \[INVALID_ARGUMENT\]: --fee-bps must be/],
        [["--fee-bps", "1.5"], /^error \[INVALID_ARGUMENT\]: --fee-bps must be/],
        [["--asset", "btc"], /^error \[INVALID_ARGUMENT\]: --asset must be/],
        [["--amount", "100000000"], /^error \[INSUFFICIENT_BALANCE\]/],
        [["--amount", "100000000", "--asset", "eth"], /^error \[INSUFFICIENT_BALANCE\]/],
        [["--to", "0x12"], /^error \[INVALID_ARGUMENT\]: --to "0x12" is not an address/],
      ] as Array<[string[], RegExp]>) {
        const amount = args.includes("--amount") ? [] : ["--amount", "1"];
        expect(await cli("fast-withdraw", ...amount, ...args, "--account", "user")).to.equal(1);
        expect(err.at(-1)).to.match(pattern);
      }
      expect(await l2.getTransactionCount(await user.getAddress())).to.equal(nonce);
      const l1Nonce = await l1.getTransactionCount(await user.getAddress());
      expect(await cli("fast-deposit", "--amount", "100000000", "--account", "user")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[INSUFFICIENT_BALANCE\]: The L1 balance is/);
      expect(await l1.getTransactionCount(await user.getAddress())).to.equal(l1Nonce);
    });
  });

  it("moves its earnings back to L1 through the standard bridge when its L1 inventory runs low", async function () {
    await solver.process.stop();
    // A low-water mark above its L1 ether: the next settlement's escrow is withdrawn at once.
    await start({ SOLVER_LOW_WATER_ETH: "100000", SOLVER_KEEP_L2_ETH: "5", SOLVER_MIN_WITHDRAWAL_ETH: "0.5" });
    const from = await logFileEnd(solver.logFile);
    const l1Before = await l1.getBalance(solver.account.address);
    await open(
      terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: parseEther("2"), outputAmount: parseEther("1.9") }),
    );
    const started = await logLine(from, (entry) => entry.msg === "rebalancing: withdrawal started" && entry.asset === "eth");
    const amount = BigInt(started.line.amount as string);
    expect(amount >= parseEther("2")).to.equal(true);
    await logLine(from, (entry) => entry.msg === "rebalancing: withdrawal finalized" && entry.l2TxHash === started.line.l2TxHash);
    // Its L1 ether: less the order's 1.9 paid out and the gas, plus the withdrawal.
    const l1After = await l1.getBalance(solver.account.address);
    expect(l1After - l1Before + parseEther("1.9")).to.be.greaterThan(amount - parseEther("0.1"));
  });
});
