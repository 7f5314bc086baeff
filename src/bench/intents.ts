import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { Bridge, type BridgeNetwork } from "@avn/bridge";
import { Contract, type ContractTransactionResponse, MaxUint256, NonceManager, parseEther, Wallet } from "ethers";
import { pino } from "pino";

import { encodeOrderData, NATIVE_TOKEN, ORDER_DATA_TYPE, OrderStatus, type OrderTerms } from "@avn/protocol/intents";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { followHeads, gasOf, median, medianBig, type GasFigure, type Timeline } from "./chain-timeline.ts";
import { timeDeposits, type DepositSettlementGas, type DepositTiming } from "./intent-deposits.ts";
import type { DestinationSettler, OriginSettler } from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";
import { DEVNET_L1_BLOCK_SECONDS } from "../common/stack-file.ts";
import { devAccount } from "../devnet/accounts.ts";
import { startL1HashRecorder } from "../devnet/l1-hash-recorder.ts";
import { deployOnDevnet } from "../devnet/local-stack.ts";
import { startOpDevnet, type OpDevnet } from "../devnet/op-devnet.ts";
import { fundSolver, SOLVER_ACCOUNT } from "../devnet/stack-solver.ts";
import { loadSolverConfig } from "../solver/config.ts";
import { startSolver } from "../solver/main.ts";

/** One order's timeline, in milliseconds of wall time. */
export interface OrderTiming {
  asset: "token" | "eth";
  /** From the arrival of the L2 block holding the `Open` event to the arrival of the L1 block holding the fill. */
  openToPaidMs: number;
  /** From the arrival of the first L2 block whose `L1Block` names the fill's block (or a later one) to the arrival of the block holding `Settled`. */
  learnedToSettledMs: number;
  /** From the arrival of the fill's L1 block to the arrival of the L2 block holding `Settled`. */
  fillToSettledMs: number;
  gas: { open: GasFigure; fill: GasFigure; settle: GasFigure };
}

export interface IntentBenchReport {
  orders: OrderTiming[];
  /** Fast deposits L1 → L2 on the same devnet, and what settling them cost. */
  deposits: DepositTiming[];
  depositSettlement: DepositSettlementGas;
  /** The standard bridge's withdrawal of the same devnet: withdraw, output, prove, finalization period (12 s here), finalize. */
  standardWithdrawalMs: number;
  standardFinalizationSeconds: bigint;
}

const FINALIZATION_SECONDS = 12n;

/**
 * Runs the intent layer on a devnet of its own, as `npm start` runs it (the solver with inventory on both chains, the
 * keeper of `L1BlockHashes`), opens `orders` fast withdrawals one after another, alternately of the primary token and
 * ETH, and times each between the arrivals of the blocks that hold its steps (new-head subscriptions on both chains,
 * so a receipt's polling delay does not count); then `deposits` fast deposits L1 → L2 the same way, and a standard
 * withdrawal.
 */
export async function measureIntents(options: {
  orders: number;
  deposits: number;
  onProgress?: (line: string) => void;
}): Promise<IntentBenchReport> {
  const progress = options.onProgress ?? (() => undefined);
  const stateDir = await mkdtemp(path.join(tmpdir(), "bench-intents-"));
  const devnet = await startOpDevnet({ stateDir, finalizationPeriodSeconds: FINALIZATION_SECONDS });
  const suffix = path.basename(stateDir);
  const ids = { l1: `bench-l1-${suffix}`, l2: `bench-l2-${suffix}` };
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    progress("Deploying modules L1 and L2 on a fresh devnet…");
    const deployed = await deployOnDevnet(devnet, ids);
    const network: BridgeNetwork = {
      name: "devnet",
      l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
      l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl },
      opContracts: devnet.l1Contracts,
      primaryToken: { l1: deployed.l1PrimaryToken, l2: deployed.l2.PrimaryToken },
      pollIntervalMs: 100,
    };
    const deployer = devnet.accounts.deployer;
    const user = devAccount(8);
    progress("Funding the user (primary tokens through the bridge) and the solver (inventory on both chains)…");
    const userBridge = await Bridge.connect(network, user.privateKey);
    const l1Token = new Contract(
      deployed.l1PrimaryToken,
      ["function transfer(address,uint256) returns (bool)"],
      new NonceManager(new Wallet(deployer.privateKey, devnet.l1Provider)),
    );
    // The user's L1 tokens: 100,000 moved to the L2 for its withdrawals, 10,000 kept for its fast deposits.
    await ((await l1Token.getFunction("transfer")(user.address, parseEther("110000"))) as ContractTransactionResponse).wait();
    await userBridge.waitFor(await userBridge.depositPrimaryToken(parseEther("100000"), { approve: true }), "RELAYED");
    await fundSolver({
      l1: devnet.l1Provider,
      bridgeNetwork: network,
      deployer,
      solver: devAccount(SOLVER_ACCOUNT).address,
      l1PrimaryToken: deployed.l1PrimaryToken,
    });

    const keeper = devAccount(11);
    await (
      await new NonceManager(new Wallet(deployer.privateKey, devnet.l2Provider)).sendTransaction({
        to: keeper.address,
        value: parseEther("1"),
      })
    ).wait();
    const recorder = await startL1HashRecorder({
      l2: devnet.l2Provider,
      l2WsUrl: devnet.l2.wsUrl,
      l1BlockHashes: deployed.l2.L1BlockHashes,
      keeper,
    });
    cleanups.push(() => recorder.stop());
    const opChainConfig = path.join(stateDir, "op-chain.json");
    await writeFile(opChainConfig, JSON.stringify({ contracts: devnet.l1Contracts }));
    const solver = await startSolver(
      loadSolverConfig({
        SOLVER_KEY: devAccount(SOLVER_ACCOUNT).privateKey,
        L1_RPC_URL: devnet.l1.rpcUrl,
        L2_RPC_URL: devnet.l2.rpcUrl,
        L2_WS_URL: devnet.l2.wsUrl,
        L1_WS_URL: devnet.l1.wsUrl,
        ORIGIN_SETTLER: deployed.l2.OriginSettler,
        L1_ORIGIN_SETTLER: deployed.l1.OriginSettler,
        // Each deposit reported at once, as the local stack's solver does: the bench times one order at a time.
        SOLVER_REPORT_DELAY_SECONDS: "0",
        SOLVER_OP_CHAIN_CONFIG: opChainConfig,
        SOLVER_STATE_DIR: path.join(stateDir, "solver"),
        SOLVER_MIN_SECONDS_LEFT: "10",
      }),
      pino({ level: "warn" }),
    );
    cleanups.push(() => solver.stop());

    const orders: OrderTiming[] = [];
    const timeline = await followHeads(devnet);
    cleanups.push(async () => timeline.stop());
    const origin = contractAt<OriginSettler>(
      "OriginSettler",
      deployed.l2.OriginSettler,
      new NonceManager(new Wallet(user.privateKey, devnet.l2Provider)),
      "intents",
    );
    const destination = contractAt<DestinationSettler>("DestinationSettler", deployed.l1.DestinationSettler, devnet.l1Provider, "intents");
    const l2Token = new Contract(deployed.l2.PrimaryToken, ["function approve(address,uint256) returns (bool)"], origin.runner);
    await ((await l2Token.getFunction("approve")(origin.target, MaxUint256)) as ContractTransactionResponse).wait();
    for (let i = 0; i < options.orders; i += 1) {
      const asset = i % 2 === 0 ? "token" : "eth";
      orders.push(
        await timeOrder({
          devnet,
          origin,
          destination,
          timeline,
          asset,
          tokens: { l1: deployed.l1PrimaryToken, l2: deployed.l2.PrimaryToken },
        }),
      );
      progress(`order ${i + 1}/${options.orders} (${asset}) settled`);
    }

    const { deposits, settlement: depositSettlement } = await timeDeposits({
      devnet,
      timeline,
      user,
      solver: solver.address,
      settlers: { l1Origin: deployed.l1.OriginSettler!, l2Destination: deployed.l2.DestinationSettler },
      tokens: { l1: deployed.l1PrimaryToken, l2: deployed.l2.PrimaryToken },
      count: options.deposits,
      onProgress: progress,
    });

    progress("Timing a standard withdrawal on the same devnet…");
    const started = performance.now();
    const hash = await userBridge.withdrawEth(parseEther("0.1"));
    await userBridge.waitFor(hash, "READY_TO_PROVE");
    await userBridge.prove(hash);
    await userBridge.waitFor(hash, "READY_FOR_RELAY");
    // The SDK calls a withdrawal ready by the latest L1 block's time; the portal checks the next block's, which on the
    // devnet can still be inside the period: finalize at the next L1 block then.
    await timeline.until("l1", () =>
      userBridge.finalize(hash).then(
        () => true,
        (error: unknown) => {
          if (String(error).includes("finalization period has not elapsed")) return undefined;
          throw error;
        },
      ),
    );
    return {
      orders,
      deposits,
      depositSettlement,
      standardWithdrawalMs: performance.now() - started,
      standardFinalizationSeconds: FINALIZATION_SECONDS,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await devnet.stop();
    await rm(stateDir, { recursive: true, force: true });
    const deployments = path.resolve(import.meta.dirname, "..", "..", "deploy", "deployments");
    for (const id of Object.values(ids)) await rm(path.join(deployments, id), { recursive: true, force: true });
  }
}

async function timeOrder(input: {
  devnet: OpDevnet;
  origin: OriginSettler;
  destination: DestinationSettler;
  timeline: Timeline;
  asset: "token" | "eth";
  tokens: { l1: string; l2: string };
}): Promise<OrderTiming> {
  const { devnet, origin, destination, timeline } = input;
  const recipient = Wallet.createRandom().address as `0x${string}`;
  const eth = input.asset === "eth";
  const terms: OrderTerms = {
    inputToken: (eth ? NATIVE_TOKEN : input.tokens.l2) as `0x${string}`,
    inputAmount: eth ? parseEther("1") : parseEther("100"),
    outputToken: (eth ? NATIVE_TOKEN : input.tokens.l1) as `0x${string}`,
    outputAmount: eth ? parseEther("0.99") : parseEther("99"),
    recipient,
    destinationChainId: BigInt(devnet.l1.chainId),
  };
  const l1Token = new Contract(input.tokens.l1, ["function balanceOf(address) view returns (uint256)"], devnet.l1Provider);
  const fillDeadline = (await devnet.l2Provider.getBlock("latest"))!.timestamp + 600;
  const tx = await origin.open(
    { fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(terms) },
    { value: eth ? terms.inputAmount : 0n },
  );
  const openReceipt = (await tx.wait())!;
  const orderId = openReceipt.logs.map((log) => origin.interface.parseLog(log)).find((parsed) => parsed?.name === "Open")!.args
    .orderId as string;
  // The recipient paid: the first L1 block showing its balance, which is the fill's block.
  await timeline.until("l1", async () => {
    const balance = eth ? await devnet.l1Provider.getBalance(recipient) : ((await l1Token.getFunction("balanceOf")(recipient)) as bigint);
    return balance > 0n ? true : undefined;
  });
  const [filled] = await destination.queryFilter(destination.filters.Filled(orderId));
  const fillReceipt = await filled.getTransactionReceipt();
  await timeline.until("l2", async () => (Number(await origin.orderStatus(orderId)) === OrderStatus.settled ? true : undefined));
  const [settledEvent] = await origin.queryFilter(origin.filters.Settled(orderId));
  const settleReceipt = await settledEvent.getTransactionReceipt();
  // The first L2 block whose L1Block names the fill's block or a later one: when the L2 learnt the fill.
  const l1Block = new Contract(L2_PREDEPLOYS.L1Block, ["function number() view returns (uint64)"], devnet.l2Provider);
  let learnedBlock = openReceipt.blockNumber;
  while (((await l1Block.getFunction("number")({ blockTag: learnedBlock })) as bigint) < BigInt(fillReceipt.blockNumber)) learnedBlock += 1;
  const [opened, paid, learned, settled] = await Promise.all([
    timeline.arrivalOf("l2", openReceipt.blockNumber),
    timeline.arrivalOf("l1", fillReceipt.blockNumber),
    timeline.arrivalOf("l2", learnedBlock),
    timeline.arrivalOf("l2", settleReceipt.blockNumber),
  ]);
  return {
    asset: input.asset,
    openToPaidMs: paid - opened,
    learnedToSettledMs: settled - learned,
    fillToSettledMs: settled - paid,
    gas: {
      open: await gasOf(devnet, "l2", openReceipt),
      fill: await gasOf(devnet, "l1", fillReceipt),
      settle: await gasOf(devnet, "l2", settleReceipt),
    },
  };
}
/** The report as printed: timings in seconds and in L1 block times (2 s on the devnet), gas against the bars. */
export function formatIntentReport(report: IntentBenchReport): string {
  const blocks = (ms: number) => (ms / 1000 / DEVNET_L1_BLOCK_SECONDS).toFixed(2);
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  const timingRow = (name: string, samples: number[], bar: string) =>
    `| ${name} | ${samples.length} | ${seconds(median(samples))} | ${blocks(median(samples))} | ${seconds(Math.max(...samples))} | ${bar} |`;
  const orders = report.orders;
  const byAsset = (asset: "token" | "eth") => orders.filter((order) => order.asset === asset);
  const lines = [
    `Fast withdrawals L2 → L1 on a fresh devnet (L1 and L2 blocks every ${DEVNET_L1_BLOCK_SECONDS} s), ${orders.length} orders, alternately the primary token and ETH:`,
    "",
    "| measurement | orders | median s | median L1 blocks | max s | bar |",
    "|---|---:|---:|---:|---:|---|",
    timingRow(
      "Open → recipient's L1 balance",
      orders.map((order) => order.openToPaidMs),
      "≤ 3 L1 blocks",
    ),
    timingRow(
      "  primary token",
      byAsset("token").map((order) => order.openToPaidMs),
      "",
    ),
    timingRow(
      "  ETH",
      byAsset("eth").map((order) => order.openToPaidMs),
      "",
    ),
    timingRow(
      "L2 learns the fill's block → escrow released",
      orders.map((order) => order.learnedToSettledMs),
      "≤ 3 L1 blocks",
    ),
    timingRow(
      "fill on L1 → escrow released on the L2",
      orders.map((order) => order.fillToSettledMs),
      "",
    ),
    "",
    "| gas (execution: less 21,000 and the calldata) | median | min | max | median whole transaction | bar |",
    "|---|---:|---:|---:|---:|---|",
  ];
  for (const [name, bar] of [
    ["open", "≤ 120,000"],
    ["fill", "≤ 80,000"],
    ["settle", "≤ 300,000"],
  ] as const) {
    const figures = orders.map((order) => order.gas[name]);
    const execution = figures.map((figure) => figure.execution);
    const floor = figures.some((figure) => figure.floorBound) ? " (some paid the calldata floor)" : "";
    lines.push(
      `| ${name}${floor} | ${medianBig(execution).toLocaleString("en-US")} | ${execution.reduce((a, b) => (a < b ? a : b)).toLocaleString("en-US")} | ${execution.reduce((a, b) => (a > b ? a : b)).toLocaleString("en-US")} | ${medianBig(figures.map((figure) => figure.gasUsed)).toLocaleString("en-US")} | ${bar} |`,
    );
  }
  lines.push("", ...formatDeposits(report));
  lines.push(
    "",
    `Standard bridge withdrawal on the same devnet (withdraw, output, prove, ${report.standardFinalizationSeconds} s finalization period, finalize): ${seconds(report.standardWithdrawalMs)} s.`,
    "Live, the same withdrawal waits out the challenge period: 7 days (604,800 s) after the proof, plus the output's proposal (about an hour).",
  );
  return lines.join("\n");
}

function formatDeposits(report: IntentBenchReport): string[] {
  const { deposits, depositSettlement } = report;
  if (deposits.length === 0) return [];
  const blocks = (ms: number) => (ms / 1000 / DEVNET_L1_BLOCK_SECONDS).toFixed(2);
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  const timingRow = (name: string, samples: number[]) =>
    `| ${name} | ${samples.length} | ${seconds(median(samples))} | ${blocks(median(samples))} | ${seconds(Math.max(...samples))} |`;
  const gasRow = (name: string, figures: GasFigure[]) => {
    const execution = figures.map((figure) => figure.execution);
    const format = (value: bigint) => value.toLocaleString("en-US");
    return `| ${name} | ${format(medianBig(execution))} | ${format(execution.reduce((a, b) => (a < b ? a : b)))} | ${format(execution.reduce((a, b) => (a > b ? a : b)))} | ${format(medianBig(figures.map((figure) => figure.gasUsed)))} |`;
  };
  const reports = depositSettlement.reports;
  return [
    `Fast deposits L1 → L2 on the same devnet, ${deposits.length} orders, alternately the primary token and ETH (settled by the solver's reports through the OP messenger: output, proof, ${report.standardFinalizationSeconds} s finalization period, relay):`,
    "",
    "| measurement | orders | median s | median L1 blocks | max s |",
    "|---|---:|---:|---:|---:|",
    timingRow(
      "Open on L1 → recipient's L2 balance",
      deposits.map((deposit) => deposit.openToPaidMs),
    ),
    timingRow(
      "fill on the L2 → escrow released on L1",
      deposits.map((deposit) => deposit.fillToReleasedMs),
    ),
    "",
    "| gas (execution) | median | min | max | median whole transaction |",
    "|---|---:|---:|---:|---:|",
    gasRow(
      "open (L1)",
      deposits.map((deposit) => deposit.gas.open),
    ),
    gasRow(
      "fill (L2)",
      deposits.map((deposit) => deposit.gas.fill),
    ),
    ...(reports.length === 0
      ? []
      : [
          gasRow(
            `report (L2; ${reports.map((entry) => entry.orders).join(", ")} orders each)`,
            reports.map((entry) => entry.report),
          ),
          gasRow(
            "report's proof (L1)",
            reports.map((entry) => entry.prove),
          ),
          gasRow(
            "report's finalization and relay (L1)",
            reports.map((entry) => entry.finalize),
          ),
        ]),
  ];
}
