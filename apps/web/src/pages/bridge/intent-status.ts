import { useQuery } from "@tanstack/react-query";
import type { Address, Hash, Hex } from "viem";
import { useConfig, type Config } from "wagmi";
import { getPublicClient } from "wagmi/actions";

import { useAppSettings, type AppSettings } from "../../app-context";
import { destinationSettlerAbi, l1OriginSettlerAbi, originSettlerAbi } from "../../generated/intent-abis";
import { isFinalPhase, orderPhase, orderStatusName, type IntentSettings, type OrderPhase, type OrderReading } from "../../lib/intents";

/**
 * An open order moves on its own (a solver fills it within a few blocks and settles it later; its deadline passes),
 * so it is read again at about the devnet's block time until it is settled or refunded.
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

/**
 * An order at one look: its status on its origin chain (`orderStatus`), its fill record on the destination (`fills`),
 * and the origin's latest block time. Both directions' settlers answer these with the same ABI.
 */
export async function readOrder(wagmiConfig: Config, settings: AppSettings, intents: IntentSettings, orderId: Hex): Promise<OrderReading> {
  const clients = intentClients(wagmiConfig, settings);
  const [origin, destination] = [clients[intents.origin], clients[intents.destination]];
  const [status, [, filledAt], latest] = await Promise.all([
    origin.readContract({ address: intents.originSettler, abi: originSettlerAbi, functionName: "orderStatus", args: [orderId] }),
    destination.readContract({ address: intents.destinationSettler, abi: destinationSettlerAbi, functionName: "fills", args: [orderId] }),
    origin.getBlock({ blockTag: "latest" }),
  ]);
  // An empty record (no fill) reads as zeros; a fill always has a time.
  return { status: orderStatusName(status), filledAt: filledAt === 0n ? undefined : filledAt, originTime: latest.timestamp };
}

/** The destination chain's transaction that filled an order (`Filled` by its indexed id), with its filler and who is repaid. */
export interface FillEvent {
  hash: Hash;
  filler: Address;
  repayTo: Address;
}

/**
 * The origin chain's transaction that closed an order: its settlement to the filler (`Settled`, or for a fast deposit
 * `SettledByMessage`, the relay of its report) or its refund (`Refunded`).
 */
export interface ClosingEvent {
  hash: Hash;
  kind: "settled" | "refunded";
}

/**
 * Where one order stands, read as the settlers see it, and the transactions that moved it (its fill on the
 * destination, its settlement or refund on the origin) once they exist. Shared by the Bridge page's list (two cells of one row read
 * the same queries, by key) and the explorer. `fillDeadline` is needed to tell an expired or refundable order from
 * one still waiting: without it (an id alone), an open order is waiting or filled.
 */
export function useOrderProgress(intents: IntentSettings, orderId: Hex, fillDeadline?: number) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;

  const originId = chains[intents.origin].id;
  const destinationId = chains[intents.destination].id;
  const settlementWindow = useQuery({
    queryKey: ["intents", "settlement-window", originId, intents.originSettler],
    staleTime: Infinity,
    queryFn: () =>
      intentClients(wagmiConfig, settings)[intents.origin].readContract({
        address: intents.originSettler,
        abi: originSettlerAbi,
        functionName: "SETTLEMENT_WINDOW",
      }),
  });
  const reading = useQuery({
    queryKey: ["intents", "order", originId, intents.originSettler, orderId],
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
    queryKey: ["intents", "fill", destinationId, intents.destinationSettler, orderId],
    enabled: filled,
    // An order is filled once, and its record never changes; read again only while its event is not found (a node
    // behind the one that answered `fills`).
    staleTime: Infinity,
    refetchInterval: (query) => (query.state.data === null ? ORDER_REFRESH_MS : false),
    queryFn: async (): Promise<FillEvent | null> => {
      const [log] = await intentClients(wagmiConfig, settings)[intents.destination].getContractEvents({
        address: intents.destinationSettler,
        abi: destinationSettlerAbi,
        eventName: "Filled",
        args: { orderId },
        fromBlock: BigInt(config[intents.destination].fromBlock),
        toBlock: "latest",
        strict: true,
      });
      return log === undefined ? null : { hash: log.transactionHash, filler: log.args.filler, repayTo: log.args.repayTo };
    },
  });
  // Settled or refunded: the one event that closed it.
  const closedAs = phase !== undefined && isFinalPhase(phase) ? (phase.phase as ClosingEvent["kind"]) : undefined;
  const closing = useQuery({
    queryKey: ["intents", "closing", originId, intents.originSettler, orderId, closedAs],
    enabled: closedAs !== undefined,
    staleTime: Infinity,
    refetchInterval: (query) => (query.state.data === null ? ORDER_REFRESH_MS : false),
    queryFn: async (): Promise<ClosingEvent | null> => {
      const client = intentClients(wagmiConfig, settings)[intents.origin];
      const range = { args: { orderId }, fromBlock: BigInt(config[intents.origin].fromBlock), toBlock: "latest", strict: true } as const;
      const [log] =
        closedAs === "refunded"
          ? await client.getContractEvents({ address: intents.originSettler, abi: originSettlerAbi, eventName: "Refunded", ...range })
          : intents.direction === "deposit"
            ? await client.getContractEvents({
                address: intents.originSettler,
                abi: l1OriginSettlerAbi,
                eventName: "SettledByMessage",
                ...range,
              })
            : await client.getContractEvents({ address: intents.originSettler, abi: originSettlerAbi, eventName: "Settled", ...range });
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
