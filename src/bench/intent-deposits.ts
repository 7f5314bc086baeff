import { Contract, type ContractTransactionResponse, MaxUint256, NonceManager, parseEther, Wallet } from "ethers";

import { encodeOrderData, NATIVE_TOKEN, ORDER_DATA_TYPE, OrderStatus, type OrderTerms } from "@avn/protocol/intents";
import type { L1OriginSettler, L2DestinationSettler } from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";
import type { DevAccount } from "../common/stack-file.ts";
import type { OpDevnet } from "../devnet/op-devnet.ts";
import { gasOf, type GasFigure, type Timeline } from "./chain-timeline.ts";

const PORTAL_EVENTS = ["event WithdrawalProven(bytes32 indexed withdrawalHash, address indexed from, address indexed to)"];

/** One fast deposit's timeline, in milliseconds of wall time. */
export interface DepositTiming {
  asset: "token" | "eth";
  /** From the arrival of the L1 block holding the `Open` event to the arrival of the L2 block holding the fill. */
  openToPaidMs: number;
  /** From the arrival of the fill's L2 block to the arrival of the L1 block whose relay paid the escrow. */
  fillToReleasedMs: number;
  gas: { open: GasFigure; fill: GasFigure };
}

/** What settling the deposits cost: each report (L2), its proof and its finalization with the relay (L1). */
export interface DepositSettlementGas {
  reports: Array<{ orders: number; report: GasFigure; prove: GasFigure; finalize: GasFigure }>;
}

/**
 * Opens `count` fast deposits L1 → L2 one after another from `user` (alternately the primary token and ETH), times
 * each until its recipient is paid on the L2, then waits until every escrow is released on L1 by the solver's
 * reports, and reads what each report's three transactions cost.
 */
export async function timeDeposits(input: {
  devnet: OpDevnet;
  timeline: Timeline;
  user: DevAccount;
  solver: string;
  settlers: { l1Origin: string; l2Destination: string };
  tokens: { l1: string; l2: string };
  count: number;
  onProgress(line: string): void;
}): Promise<{ deposits: DepositTiming[]; settlement: DepositSettlementGas }> {
  const { devnet, timeline } = input;
  const signer = new NonceManager(new Wallet(input.user.privateKey, devnet.l1Provider));
  const origin = contractAt<L1OriginSettler>("L1OriginSettler", input.settlers.l1Origin, signer, "intents");
  const destination = contractAt<L2DestinationSettler>("L2DestinationSettler", input.settlers.l2Destination, devnet.l2Provider, "intents");
  const l1Token = new Contract(input.tokens.l1, ["function approve(address,uint256) returns (bool)"], signer);
  await ((await l1Token.getFunction("approve")(origin.target, MaxUint256)) as ContractTransactionResponse).wait();
  const l2Token = new Contract(input.tokens.l2, ["function balanceOf(address) view returns (uint256)"], devnet.l2Provider);

  const opened: Array<{ orderId: string; asset: "token" | "eth"; openBlock: number; openGas: GasFigure }> = [];
  const deposits: DepositTiming[] = [];
  const fills = new Map<string, { block: number; gas: GasFigure }>();
  for (let i = 0; i < input.count; i += 1) {
    const asset = i % 2 === 0 ? "token" : "eth";
    const eth = asset === "eth";
    const recipient = Wallet.createRandom().address as `0x${string}`;
    const terms: OrderTerms = {
      inputToken: (eth ? NATIVE_TOKEN : input.tokens.l1) as `0x${string}`,
      inputAmount: eth ? parseEther("1") : parseEther("100"),
      outputToken: (eth ? NATIVE_TOKEN : input.tokens.l2) as `0x${string}`,
      outputAmount: eth ? parseEther("0.99") : parseEther("99"),
      recipient,
      destinationChainId: BigInt(devnet.l2.chainId),
    };
    const fillDeadline = (await devnet.l1Provider.getBlock("latest"))!.timestamp + 600;
    const tx = await origin.open(
      { fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(terms) },
      { value: eth ? terms.inputAmount : 0n },
    );
    const receipt = (await tx.wait())!;
    const orderId = receipt.logs.map((log) => origin.interface.parseLog(log)).find((parsed) => parsed?.name === "Open")!.args
      .orderId as string;
    await timeline.until("l2", async () => {
      const balance = eth ? await devnet.l2Provider.getBalance(recipient) : ((await l2Token.getFunction("balanceOf")(recipient)) as bigint);
      return balance > 0n ? true : undefined;
    });
    const [filled] = await destination.queryFilter(destination.filters.Filled(orderId));
    const fillReceipt = await filled.getTransactionReceipt();
    fills.set(orderId, { block: fillReceipt.blockNumber, gas: await gasOf(devnet, "l2", fillReceipt) });
    opened.push({ orderId, asset, openBlock: receipt.blockNumber, openGas: await gasOf(devnet, "l1", receipt) });
    input.onProgress(`deposit ${i + 1}/${input.count} (${asset}) paid on the L2`);
  }

  const statuses = async () => Promise.all(opened.map(async ({ orderId }) => Number(await origin.orderStatus(orderId))));
  await timeline.until("l1", async () => ((await statuses()).every((status) => status === OrderStatus.settled) ? true : undefined));
  input.onProgress("every deposit's escrow released on L1");

  const reportTxs = new Map<string, { finalize?: string; orders: number }>();
  for (const order of opened) {
    const fill = fills.get(order.orderId)!;
    const [settled] = await origin.queryFilter(origin.filters.SettledByMessage(order.orderId));
    const [openedAt, paidAt, releasedAt] = await Promise.all([
      timeline.arrivalOf("l1", order.openBlock),
      timeline.arrivalOf("l2", fill.block),
      timeline.arrivalOf("l1", settled.blockNumber),
    ]);
    deposits.push({
      asset: order.asset,
      openToPaidMs: paidAt - openedAt,
      fillToReleasedMs: releasedAt - paidAt,
      gas: { open: order.openGas, fill: fill.gas },
    });
    const entry = reportTxs.get(settled.transactionHash) ?? { orders: 0 };
    entry.orders += 1;
    reportTxs.set(settled.transactionHash, entry);
  }
  return { deposits, settlement: await settlementGas(devnet, input.solver, destination, reportTxs) };
}

/** The gas of each report (by the L1 transaction that relayed it), its proof and its finalization. */
async function settlementGas(
  devnet: OpDevnet,
  solver: string,
  destination: L2DestinationSettler,
  byFinalization: Map<string, { orders: number }>,
): Promise<DepositSettlementGas> {
  const reports = await destination.queryFilter(destination.filters.FillsReported());
  const portal = new Contract(devnet.l1Contracts.OptimismPortal, PORTAL_EVENTS, devnet.l1Provider);
  const proofs = await portal.queryFilter(portal.filters.WithdrawalProven());
  const proofReceipts = (await Promise.all(proofs.map((proof) => proof.getTransactionReceipt()))).filter(
    (receipt) => receipt.from.toLowerCase() === solver.toLowerCase(),
  );
  const finalizeReceipts = (await Promise.all([...byFinalization.keys()].map((hash) => devnet.l1Provider.getTransactionReceipt(hash))))
    .map((receipt) => receipt!)
    .sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
  proofReceipts.sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
  const result: DepositSettlementGas = { reports: [] };
  // The solver reports, proves and finalizes in the same order, one of each per report.
  for (const [i, report] of reports.entries()) {
    const finalizeReceipt = finalizeReceipts[i];
    if (finalizeReceipt === undefined || proofReceipts[i] === undefined) break;
    const finalization = finalizeReceipt.hash;
    result.reports.push({
      orders: byFinalization.get(finalization)!.orders,
      report: await gasOf(devnet, "l2", await report.getTransactionReceipt()),
      prove: await gasOf(devnet, "l1", proofReceipts[i]),
      finalize: await gasOf(devnet, "l1", finalizeReceipt),
    });
  }
  return result;
}
