import { useQuery } from "@tanstack/react-query";
import { epochQos, type EpochFrame, type LicenseQos } from "@avn/protocol/qos";
import type { PublicClient } from "viem";

import { useAppSettings } from "../../app-context";
import { epochFrames, updateQosSnapshot, type QosSnapshot } from "./qos-logs";

/** New heartbeats, votes and results move the figures, so the events are read again every few seconds. */
const REFRESH_MS = 5_000;

/** One offered epoch's figures, by license id. */
export interface EpochQos {
  frame: EpochFrame;
  current: boolean;
  figures: ReadonlyMap<bigint, LicenseQos>;
}

/** The figures of the current epoch and of up to three before it, the current one first. */
export interface QosView {
  /** The L2 block they were read at. */
  block: bigint;
  epochs: EpochQos[];
  /** The events and reads they were computed from (an ended epoch's settlement is computed from them too). */
  snapshot: QosSnapshot;
}

/** Every offered epoch's figures from one snapshot: `epochQos` on the same events for each frame. */
function viewOf(snapshot: QosSnapshot): QosView {
  const frames = epochFrames(snapshot, snapshot.head.timestamp, snapshot.livenessWindow);
  return {
    block: snapshot.head.block,
    epochs: frames.map((frame, index) => ({ frame, current: index === 0, figures: epochQos(snapshot.events, frame) })),
    snapshot,
  };
}

/**
 * Each license's quality of service, computed in the page from the registries' events read through
 * `client` (the page's L2 client). The events are kept by the query between refreshes, so a refresh reads
 * only the new blocks; the sections that use it share one read.
 */
export function useEpochQos(client: PublicClient) {
  const { config } = useAppSettings();
  const contracts = { nodeRegistry: config.contracts.l2.NodeRegistry, verificationRegistry: config.contracts.l2.VerificationRegistry };
  const fromBlock = config.l2.fromBlock;
  return useQuery({
    queryKey: ["network", "qos", contracts.nodeRegistry, contracts.verificationRegistry, fromBlock],
    queryFn: ({ client: queryClient, queryKey }) =>
      updateQosSnapshot(client, contracts, BigInt(fromBlock), queryClient.getQueryData<QosSnapshot>(queryKey)),
    select: viewOf,
    // The snapshot is replaced whole on each read; comparing its events deeply would only cost time.
    structuralSharing: false,
    refetchInterval: REFRESH_MS,
  });
}
