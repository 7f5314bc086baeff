import { Interface } from "ethers";

import { AvnError } from "@avn/protocol/errors";
import { livenessWindowAt } from "@avn/protocol/qos-logs";
import { lastBlockBefore, settlementTree, type RewardsTree } from "@avn/protocol/rewards";

import type { JsonRpc } from "./balance-slot.ts";
import { QosIndex } from "./qos-index.ts";

const ABI = new Interface([
  "function REGISTRY() view returns (address)",
  "function NODE_REGISTRY() view returns (address)",
  "function EPOCHS_START() view returns (uint256)",
  "function EPOCH_DURATION() view returns (uint256)",
  "function livenessWindow() view returns (uint256)",
  "function settlementOf(uint256 epoch) view returns ((uint256 pool, uint256 claimed, bytes32 root, bool accepted, uint256 round, uint256 settlementOpensAt, uint256 votingClosesAt, uint256 claimsOpenAt))",
]);

/** `RewardPools.settlementOf`: an epoch's pool and the state of its settlement. */
export interface SettlementState {
  pool: bigint;
  claimed: bigint;
  root: string;
  accepted: boolean;
  round: bigint;
  settlementOpensAt: number;
  votingClosesAt: number;
  claimsOpenAt: number;
}

/** An epoch's payouts as the chain's events give them, and the block they were read through. */
export interface EpochRewards {
  epoch: number;
  state: SettlementState;
  /** The last block before the settlement opened: every event after it is left out. */
  throughBlock: number;
  tree: RewardsTree;
}

/** Thrown when an epoch's settlement has not opened yet: its figures are not final. */
export class SettlementNotOpenError extends AvnError<"SETTLEMENT_NOT_OPEN"> {
  readonly epoch: number;
  readonly opensAt: number;

  constructor(epoch: number, opensAt: number) {
    super("SETTLEMENT_NOT_OPEN", `Epoch ${epoch}'s settlement opens at ${new Date(opensAt * 1000).toISOString()}: wait for it.`);
    this.name = "SettlementNotOpenError";
    this.epoch = epoch;
    this.opensAt = opensAt;
  }
}

/**
 * Each ended epoch's rewards tree (`@avn/protocol/rewards`), from the registries' events up to the last block
 * before the epoch's settlement opened, and the liveness window of that block: the same inputs for every
 * reader, so every node votes the same root and every claimant finds its proof under it. The events are read
 * once, incrementally (`QosIndex`), and kept for every epoch.
 */
export class EpochSettlements {
  readonly #rpc: JsonRpc;
  readonly #rewardPools: string;
  readonly #fromBlock: number | undefined;
  #contracts: { nodeRegistry: string; epochsStart: number; epochDuration: number; index: QosIndex } | undefined;

  constructor(rpc: JsonRpc, rewardPools: string, fromBlock?: number) {
    this.#rpc = rpc;
    this.#rewardPools = rewardPools;
    this.#fromBlock = fromBlock;
  }

  /** `epoch`'s settlement as the contract holds it now. */
  async state(epoch: number): Promise<SettlementState> {
    const [state] = (await this.#call(this.#rewardPools, "settlementOf", [epoch])) as unknown as [Record<string, unknown>];
    return {
      pool: state.pool as bigint,
      claimed: state.claimed as bigint,
      root: state.root as string,
      accepted: state.accepted as boolean,
      round: state.round as bigint,
      settlementOpensAt: Number(state.settlementOpensAt),
      votingClosesAt: Number(state.votingClosesAt),
      claimsOpenAt: Number(state.claimsOpenAt),
    };
  }

  /** The epoch now, by the chain's latest block. */
  async currentEpoch(): Promise<{ epoch: number; timestamp: number }> {
    const contracts = await this.#readContracts();
    const head = await this.#rpc.request<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false]);
    const timestamp = Number(BigInt(head.timestamp));
    return { epoch: Math.floor((timestamp - contracts.epochsStart) / contracts.epochDuration), timestamp };
  }

  /** `epoch`'s payouts; throws `SettlementNotOpenError` while its settlement has not opened. */
  async rewards(epoch: number): Promise<EpochRewards> {
    const contracts = await this.#readContracts();
    const state = await this.state(epoch);
    const head = await contracts.index.update();
    if (head.timestamp < state.settlementOpensAt) throw new SettlementNotOpenError(epoch, state.settlementOpensAt);
    const throughBlock = Number(
      await lastBlockBefore(state.settlementOpensAt, BigInt(this.#fromBlock ?? 0), BigInt(head.block) + 1n, (block) =>
        this.#timestampOf(block),
      ),
    );
    const livenessWindow = await this.#livenessWindowAt(contracts, throughBlock);
    const tree = settlementTree({
      epoch,
      pool: state.pool,
      settlementOpensAt: state.settlementOpensAt,
      epochsStart: contracts.epochsStart,
      epochDuration: contracts.epochDuration,
      livenessWindow,
      throughBlock,
      events: contracts.index.events,
    });
    return { epoch, state, throughBlock, tree };
  }

  async #readContracts() {
    if (this.#contracts !== undefined) return this.#contracts;
    const [registry] = await this.#call(this.#rewardPools, "REGISTRY", []);
    const [[nodeRegistry], [epochsStart], [epochDuration]] = await Promise.all([
      this.#call(String(registry), "NODE_REGISTRY", []),
      this.#call(String(registry), "EPOCHS_START", []),
      this.#call(String(registry), "EPOCH_DURATION", []),
    ]);
    const index = new QosIndex(this.#rpc, { nodeRegistry: String(nodeRegistry), verificationRegistry: String(registry) }, this.#fromBlock);
    this.#contracts = {
      nodeRegistry: String(nodeRegistry),
      epochsStart: Number(epochsStart),
      epochDuration: Number(epochDuration),
      index,
    };
    return this.#contracts;
  }

  /**
   * `NodeRegistry.livenessWindow()` as it was in `block`: from the `LivenessWindowUpdated` events the index
   * holds (its constructor emits the first), so that no historical call is needed, which an RPC that keeps no
   * archive refuses for a block days old; the call at that block only when the index has none that early (a
   * registry deployed before `fromBlock`).
   */
  async #livenessWindowAt(contracts: { nodeRegistry: string; index: QosIndex }, block: number): Promise<number> {
    const window = livenessWindowAt(contracts.index.events.livenessWindows ?? [], block);
    if (window !== undefined) return window;
    const [called] = await this.#call(contracts.nodeRegistry, "livenessWindow", [], block);
    return Number(called);
  }

  async #timestampOf(block: bigint): Promise<number> {
    const header = await this.#rpc.request<{ timestamp: string } | null>("eth_getBlockByNumber", [`0x${block.toString(16)}`, false]);
    if (header === null) throw new Error(`the L2 has no block ${block}`);
    return Number(BigInt(header.timestamp));
  }

  async #call(to: string, name: string, args: unknown[], block?: number) {
    const data = ABI.encodeFunctionData(name, args);
    const tag = block === undefined ? "latest" : `0x${block.toString(16)}`;
    return ABI.decodeFunctionResult(name, await this.#rpc.request<string>("eth_call", [{ to, data }, tag]));
  }
}
