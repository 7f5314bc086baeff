import { useQuery } from "@tanstack/react-query";
import type { Address, Hash, Hex } from "viem";
import { useConfig, type Config } from "wagmi";
import { getPublicClient } from "wagmi/actions";

import { useAppSettings, type AppSettings } from "../../app-context";
import { destinationSettlerAbi, originSettlerAbi } from "../../generated/intent-abis";
import { isFinalPhase, orderPhase, orderStatusName, type IntentSettings, type OrderPhase, type OrderReading } from "../../lib/intents";

/**
 * An open order moves on its own (a solver fills it within a few L1 blocks, settles it a few L2 blocks later; its
 * deadline passes), so it is read again at about the devnet's L1 block time until it is settled or refunded.
 */
export const ORDER_REFRESH_MS = 2_000;

/** The wagmi public clients of both chains (reads need no wallet). */
export function intentClients(wagmiConfig: Config, { chains }: AppSettings) {
  const l1 = getPublicClient(wagmiConfig, { chainId: chains.l1.id });
  const l2 = getPublicClient(wagmiConfig, { chainId: chains.l2.id });
  // Both chains are in the wagmi config, so a missing client is a programming error, not a user's.
  if (l1 === undefined || l2 === undefined) throw new Error("The app's wagmi configuration lacks one of the chains.");
  return { l1, l2 };
}

/** An order at one look: its status on the L2 (`orderStatus`), its fill record on L1 (`fills`), and the L2's latest block time. */
export async function readOrder(wagmiConfig: Config, settings: AppSettings, intents: IntentSettings, orderId: Hex): Promise<OrderReading> {
  const { l1, l2 } = intentClients(wagmiConfig, settings);
  const [status, [, filledAt], latest] = await Promise.all([
    l2.readContract({ address: intents.originSettler, abi: originSettlerAbi, functionName: "orderStatus", args: [orderId] }),
    l1.readContract({ address: intents.destinationSettler, abi: destinationSettlerAbi, functionName: "fills", args: [orderId] }),
    l2.getBlock({ blockTag: "latest" }),
  ]);
  // An empty record (no fill) reads as zeros; a fill always has a time.
  return { status: orderStatusName(status), filledAt: filledAt === 0n ? undefined : filledAt, l2Time: latest.timestamp };
}

/** The L1 transaction that filled an order (`Filled` by its indexed id), with its filler and who is repaid. */
export interface FillEvent {
  hash: Hash;
  filler: Address;
  repayTo: Address;
}

/** The L2 transaction that closed an order: its settlement to the filler (`Settled`) or its refund (`Refunded`). */
export interface ClosingEvent {
  hash: Hash;
  kind: "settled" | "refunded";
}

/**
 * Where one order stands, read as the settlers see it, and the transactions that moved it (its fill on L1, its
 * settlement or refund on the L2) once they exist. Shared by the Bridge page's list (two cells of one row read
 * the same queries, by key) and the explorer. `fillDeadline` is needed to tell an expired or refundable order from
 * one still waiting: without it (an id alone), an open order is waiting or filled.
 */
export function useOrderProgress(intents: IntentSettings, orderId: Hex, fillDeadline?: number) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;

  const settlementWindow = useQuery({
    queryKey: ["intents", "settlement-window", chains.l2.id, intents.originSettler],
    staleTime: Infinity,
    queryFn: () =>
      intentClients(wagmiConfig, settings).l2.readContract({
        address: intents.originSettler,
        abi: originSettlerAbi,
        functionName: "SETTLEMENT_WINDOW",
      }),
  });
  const reading = useQuery({
    queryKey: ["intents", "order", chains.l2.id, intents.originSettler, orderId],
    refetchInterval: (query) =>
      query.state.data !== undefined && ["settled", "refunded"].includes(query.state.data.status) ? false : ORDER_REFRESH_MS,
    queryFn: () => readOrder(wagmiConfig, settings, intents, orderId),
  });
  const timing =
    fillDeadline === undefined || settlementWindow.data === undefined
      ? undefined
      : { fillDeadline, settlementWindow: settlementWindow.data };
  const phase: OrderPhase | undefined = reading.data === undefined ? undefined : orderPhase(reading.data, timing);

  const filled = reading.data?.filledAt !== undefined;
  const fill = useQuery({
    queryKey: ["intents", "fill", chains.l1.id, intents.destinationSettler, orderId],
    enabled: filled,
    // An order is filled once, and its record never changes; read again only while its event is not found (a node
    // behind the one that answered `fills`).
    staleTime: Infinity,
    refetchInterval: (query) => (query.state.data === null ? ORDER_REFRESH_MS : false),
    queryFn: async (): Promise<FillEvent | null> => {
      const [log] = await intentClients(wagmiConfig, settings).l1.getContractEvents({
        address: intents.destinationSettler,
        abi: destinationSettlerAbi,
        eventName: "Filled",
        args: { orderId },
        fromBlock: BigInt(config.l1.fromBlock),
        toBlock: "latest",
        strict: true,
      });
      return log === undefined ? null : { hash: log.transactionHash, filler: log.args.filler, repayTo: log.args.repayTo };
    },
  });
  // Settled or refunded: the one event that closed it.
  const closedAs = phase !== undefined && isFinalPhase(phase) ? (phase.phase as ClosingEvent["kind"]) : undefined;
  const closing = useQuery({
    queryKey: ["intents", "closing", chains.l2.id, intents.originSettler, orderId, closedAs],
    enabled: closedAs !== undefined,
    staleTime: Infinity,
    refetchInterval: (query) => (query.state.data === null ? ORDER_REFRESH_MS : false),
    queryFn: async (): Promise<ClosingEvent | null> => {
      const [log] = await intentClients(wagmiConfig, settings).l2.getContractEvents({
        address: intents.originSettler,
        abi: originSettlerAbi,
        eventName: closedAs === "settled" ? "Settled" : "Refunded",
        args: { orderId },
        fromBlock: BigInt(config.l2.fromBlock),
        toBlock: "latest",
        strict: true,
      });
      return log === undefined ? null : { hash: log.transactionHash, kind: closedAs! };
    },
  });

  return {
    reading,
    phase,
    fill: fill.data ?? undefined,
    closing: closing.data ?? undefined,
    refresh: () => void reading.refetch(),
  };
}
