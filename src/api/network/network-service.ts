import { Interface } from "ethers";

import { epochAt, networkStatus, QosReplay, type LicenseQos, type NetworkStatus } from "@avn/protocol/qos";

import type { JsonRpc } from "../../chains/evm/balance-slot.ts";
import { QosIndex } from "../../chains/evm/qos-index.ts";

const REGISTRY_ABI = new Interface([
  "function NODE_REGISTRY() view returns (address)",
  "function EPOCHS_START() view returns (uint256)",
  "function EPOCH_DURATION() view returns (uint256)",
  "function livenessWindow() view returns (uint256)",
]);

/** One license in `GET /api/network/nodes`: this epoch's figures, every number an integer. */
export interface NetworkNode {
  licenseId: number;
  operator: string | null;
  live: boolean;
  uptimeBps: number;
  participationBps: number;
  accuracyBps: number;
  medianVoteDelayBlocks: number;
  scoreBps: number;
  jobsAsked: number;
  votes: number;
  agreed: number;
  /** Of the agreeing votes, those committed before the answer was public: what epoch rewards pay. */
  points: number;
  disagreed: number;
  /** Capacity as the challenges measured it: challenge jobs asked while live, answered, and the median delay. */
  challengeJobsAsked: number;
  challengeJobsAnswered: number;
  challengeMedianVoteDelayBlocks: number;
  /** Attested answers issued in the epoch and recorded on-chain with the license's signature. */
  attestations: number;
}

/** `GET /api/network/nodes`. */
export interface NetworkNodes {
  epoch: number;
  /** Unix seconds. */
  epochEndsAt: number;
  /** The L2 block the figures were read at. */
  block: number;
  nodes: NetworkNode[];
}

interface Snapshot {
  /** When its read started (ms). */
  at: number;
  value: NetworkNodes;
  byLicense: Map<bigint, LicenseQos>;
  status: NetworkStatus;
}

export interface NetworkServiceOptions {
  /** The L2's JSON-RPC. */
  l2: JsonRpc;
  verificationRegistry: string;
  /** The nodes' `QosReports`: without it, `status()` says no node reported. */
  qosReports?: string;
  /** The block to read events from: the registries' deployment (0 reads the whole chain). */
  fromBlock?: number;
  /**
   * How old a snapshot may be before a request reads the chain again (default 2 s; at least ten replay times, see
   * `#current`). 0 reads the chain on every request, the replay's own limit included: the next read then sees every
   * block mined before it.
   */
  maxAgeMs?: number;
  /**
   * Keep every event read, not only the current epoch's, so that `pastEpoch` can replay an earlier epoch
   * (`npm run qos -- --epoch`); the API keeps only what the current epoch needs.
   */
  keepAllEvents?: boolean;
}

/**
 * The network's quality of service as the chain records it (`@avn/protocol/qos`): one snapshot shared by
 * every request, read again when older than `maxAgeMs`, by one request at a time (the others wait for it).
 * So `GET /api/network/nodes` reflects the jobs finalized up to `maxAgeMs` plus one read earlier.
 */
export class NetworkService {
  readonly #rpc: JsonRpc;
  readonly #verificationRegistry: string;
  readonly #fromBlock: number | undefined;
  readonly #qosReports: string | undefined;
  readonly #keepAllEvents: boolean;
  readonly #maxAgeMs: number;
  // Fixed at deployment, read once on the first request (the API starts whether or not the L2 answers).
  #registry: { nodeRegistry: string; epochsStart: number; epochDuration: number; index: QosIndex } | undefined;
  #snapshot: Snapshot | undefined;
  #reading: Promise<Snapshot> | undefined;
  /** How long the last replay of the events took (ms): the snapshot is kept at least ten times that. */
  #lastComputeMs = 0;
  /** The current epoch's replay, which each read extends with the blocks read since. */
  #replay: QosReplay | undefined;

  constructor(options: NetworkServiceOptions) {
    this.#rpc = options.l2;
    this.#verificationRegistry = options.verificationRegistry;
    this.#fromBlock = options.fromBlock;
    this.#qosReports = options.qosReports;
    this.#keepAllEvents = options.keepAllEvents === true;
    this.#maxAgeMs = options.maxAgeMs ?? 2_000;
  }

  /** Every license ever delegated, with its figures for the current epoch. */
  async nodes(): Promise<NetworkNodes> {
    return (await this.#current()).value;
  }

  /** The service as the nodes' reports of the current epoch measured it (medians over reporters). */
  async status(): Promise<NetworkStatus> {
    return (await this.#current()).status;
  }

  /**
   * An epoch's figures, the current one or one before (a service made with `keepAllEvents`): a past epoch
   * counted to its end, under the liveness window of now.
   */
  async pastEpoch(epoch: number): Promise<{ epoch: number; epochEndsAt: number; block: number; byLicense: Map<bigint, LicenseQos> }> {
    const snapshot = await this.#current();
    const registry = this.#registry!;
    if (epoch === snapshot.value.epoch) return { ...snapshot.value, byLicense: snapshot.byLicense };
    if (!this.#keepAllEvents) throw new Error("this service keeps only the current epoch's events");
    if (!Number.isSafeInteger(epoch) || epoch < 0 || epoch > snapshot.value.epoch) throw new RangeError(`no epoch ${epoch} yet`);
    const start = registry.epochsStart + epoch * registry.epochDuration;
    const frame = { epoch, start, end: start + registry.epochDuration, livenessWindow: this.#replay!.frame.livenessWindow };
    return {
      epoch,
      epochEndsAt: frame.end,
      block: snapshot.value.block,
      byLicense: new QosReplay(frame).apply(registry.index.events).figures(frame.end),
    };
  }

  async #current(): Promise<Snapshot> {
    const snapshot = this.#snapshot;
    // The replay runs on the event loop: on a large network it is read again at most every ten replay times,
    // so that it never takes more than a tenth of the process (`npm run bench:qos` has the figures).
    // A caller that asked for no reuse (0) gets none: a snapshot kept for ten replay times would hide the blocks
    // mined meanwhile from its next read.
    const reuse =
      this.#maxAgeMs > 0 && snapshot !== undefined && Date.now() - snapshot.at <= Math.max(this.#maxAgeMs, 10 * this.#lastComputeMs);
    if (reuse) return snapshot;
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #read(): Promise<Snapshot> {
    const at = Date.now();
    const registry = (this.#registry ??= await this.#readRegistry());
    const [head, livenessWindow] = await Promise.all([
      registry.index.update(),
      readCall(this.#rpc, registry.nodeRegistry, "livenessWindow"),
    ]);
    const frame = {
      ...epochAt(head.timestamp, registry.epochsStart, registry.epochDuration),
      livenessWindow: Number(livenessWindow),
    };
    registry.index.pruneReports(frame.epoch);
    const computing = performance.now();
    // Within an epoch only the new blocks' events are applied to the replay; a new epoch (or a new
    // liveness window) replays the events kept since a window before its start, once.
    let replay = this.#replay;
    const added = registry.index.takeAdded();
    if (replay === undefined || replay.frame.epoch !== frame.epoch || replay.frame.livenessWindow !== frame.livenessWindow) {
      // A heartbeat up to one window before the epoch can make a license live at its first jobs.
      if (!this.#keepAllEvents) registry.index.prune(frame.start - frame.livenessWindow);
      replay = this.#replay = new QosReplay(frame).apply(registry.index.events);
    } else replay.apply(added);
    const byLicense = replay.figures(head.timestamp);
    this.#lastComputeMs = performance.now() - computing;
    const value: NetworkNodes = {
      epoch: frame.epoch,
      epochEndsAt: frame.end,
      block: head.block,
      nodes: [...byLicense.values()].map(toNetworkNode),
    };
    this.#snapshot = {
      at,
      value,
      byLicense,
      status: networkStatus(registry.index.reports, frame.epoch, registry.index.events.delegations),
    };
    return this.#snapshot;
  }

  async #readRegistry() {
    const call = (name: string) => readCall(this.#rpc, this.#verificationRegistry, name);
    const [nodeRegistry, epochsStart, epochDuration] = await Promise.all([
      call("NODE_REGISTRY"),
      call("EPOCHS_START"),
      call("EPOCH_DURATION"),
    ]);
    const contracts = {
      nodeRegistry: String(nodeRegistry).toLowerCase(),
      verificationRegistry: this.#verificationRegistry,
      qosReports: this.#qosReports,
    };
    return {
      nodeRegistry: contracts.nodeRegistry,
      epochsStart: Number(epochsStart),
      epochDuration: Number(epochDuration),
      index: new QosIndex(this.#rpc, contracts, this.#fromBlock),
    };
  }
}

/** A license's figures as `GET /api/network/nodes` writes them. */
export function toNetworkNode(figures: LicenseQos): NetworkNode {
  return {
    licenseId: Number(figures.licenseId),
    operator: figures.operator,
    live: figures.live,
    uptimeBps: figures.uptimeBps,
    participationBps: figures.participationBps,
    accuracyBps: figures.accuracyBps,
    medianVoteDelayBlocks: figures.medianVoteDelayBlocks,
    scoreBps: figures.scoreBps,
    jobsAsked: figures.jobsAsked,
    votes: figures.votes,
    agreed: figures.agreed,
    points: figures.points,
    disagreed: figures.disagreed,
    challengeJobsAsked: figures.challengeJobsAsked,
    challengeJobsAnswered: figures.challengeJobsAnswered,
    challengeMedianVoteDelayBlocks: figures.challengeMedianVoteDelayBlocks,
    attestations: figures.attestations,
  };
}

async function readCall(rpc: JsonRpc, to: string, name: string): Promise<unknown> {
  const data = REGISTRY_ABI.encodeFunctionData(name, []);
  const result = await rpc.request<string>("eth_call", [{ to, data }, "latest"]);
  return REGISTRY_ABI.decodeFunctionResult(name, result)[0];
}
