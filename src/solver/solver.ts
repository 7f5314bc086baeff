import type { Bridge } from "@avn/bridge";
import { Contract, type ContractTransactionResponse, MaxUint256, NonceManager, type JsonRpcProvider, Wallet } from "ethers";
import type { Logger } from "pino";

import { decodeOriginData } from "@avn/protocol/intents";
import type { DestinationSettler, L1BlockHashes, OriginSettler, StorageProofVerifier } from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";
import { describeError } from "../common/describe-error.ts";
import { JsonRpcSubscription } from "../common/json-rpc-subscription.ts";
import { describeOrder, Filler } from "./filler.ts";
import type { JournaledOrder, SolverJournal } from "./journal.ts";
import { readOpenedOrders } from "./order-feed.ts";
import { quote, type SolverPolicy } from "./policy.ts";
import { Rebalancer, type RebalancePolicy } from "./rebalancer.ts";
import { Settler } from "./settler.ts";

/** Gas the policy charges an ETH order for: a fill (about 50k on L1) and a settlement with its proof (about 120k on the L2). */
const FILL_GAS = 80_000n;
const SETTLE_GAS = 300_000n;

const ERC20_ABI = [
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address,address) view returns (uint256)",
  "function approve(address,uint256) returns (bool)",
];

export interface SolverOptions {
  l1: JsonRpcProvider;
  l2: JsonRpcProvider;
  /** The L2's WebSocket endpoint: each new L2 block wakes the solver. */
  l2WsUrl: string;
  /** The solver's key: the same account fills on L1 and is repaid on the L2. */
  key: string;
  originSettler: string;
  journal: SolverJournal;
  policy: SolverPolicy;
  /** Rebalancing through the standard bridge (off without it): `connect` gets the bridge for the settlers' tokens. */
  rebalance?: { connect(tokens: { l1: string; l2: string }): Promise<Bridge>; policy: RebalancePolicy };
  /** How far back the first run looks for `Open` events, in L2 blocks. */
  firstLookback: number;
  logger: Logger;
}

/**
 * The intent layer's solver (docs/intents.md): it reads every `Open` event of the origin settler on the L2, fills on
 * L1 the orders its policy finds profitable, settles each fill on the L2 with a storage proof of the fill's record,
 * and moves its earnings back to L1 through the standard bridge when a side runs low. Every L2 block wakes it for one
 * pass; a pass in progress when a block arrives is followed by one more. What it does is journaled first
 * (`SolverJournal`), so a restart goes on where it stopped.
 */
export class Solver {
  readonly address: string;
  readonly #options: SolverOptions;
  readonly #origin: OriginSettler;
  readonly #filler: Filler;
  readonly #settler: Settler;
  readonly #l2Signer: NonceManager;
  readonly #rebalancer: Rebalancer | undefined;
  readonly #tokens: { l1: string; l2: string };
  readonly #subscription: JsonRpcSubscription;
  readonly #waiting = new Set<string>();
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  private constructor(
    options: SolverOptions,
    parts: {
      origin: OriginSettler;
      destination: DestinationSettler;
      hashes: L1BlockHashes;
      tokens: { l1: string; l2: string };
      bridge: Bridge | undefined;
    },
  ) {
    this.#options = options;
    const l1Wallet = new Wallet(options.key, options.l1);
    this.address = l1Wallet.address;
    this.#origin = parts.origin;
    this.#tokens = parts.tokens;
    this.#l2Signer = new NonceManager(new Wallet(options.key, options.l2));
    this.#filler = new Filler({ l1: options.l1, wallet: l1Wallet, destination: parts.destination, journal: options.journal });
    this.#settler = new Settler({
      l1: options.l1,
      origin: parts.origin,
      hashes: parts.hashes,
      destination: parts.destination.target as string,
      signer: this.#l2Signer,
    });
    this.#rebalancer =
      options.rebalance === undefined || parts.bridge === undefined
        ? undefined
        : new Rebalancer({ bridge: parts.bridge, journal: options.journal, policy: options.rebalance.policy, logger: options.logger });
    this.#subscription = new JsonRpcSubscription({
      url: options.l2WsUrl,
      params: ["newHeads"],
      onEvent: () => this.wake(),
      // A block mined while (re)subscribing was announced to nobody: read the chain once more.
      onSubscribed: () => this.wake(),
      onClose: () => options.logger.warn("the L2 head subscription closed; reconnecting"),
    });
  }

  /** Reads the settlers' settings, anchors the journal to them, grants the destination settler the L1 token once, and starts. */
  static async start(options: SolverOptions): Promise<Solver> {
    const origin = contractAt<OriginSettler>("OriginSettler", options.originSettler, options.l2, "intents");
    const [destinationAddress, destinationChainId, l2Token, l1Token, verifierAddress] = await Promise.all([
      origin.DESTINATION_SETTLER(),
      origin.DESTINATION_CHAIN_ID(),
      origin.INPUT_TOKEN(),
      origin.OUTPUT_TOKEN(),
      origin.VERIFIER(),
    ]);
    const l1Network = await options.l1.getNetwork();
    if (l1Network.chainId !== destinationChainId)
      throw new Error(`The L1 RPC serves chain ${l1Network.chainId}; the origin settler's destination is chain ${destinationChainId}`);
    const verifier = contractAt<StorageProofVerifier>("StorageProofVerifier", verifierAddress, options.l2, "proofs");
    const hashes = contractAt<L1BlockHashes>("L1BlockHashes", await verifier.L1_BLOCK_HASHES(), options.l2, "proofs");
    const l2ChainId = (await options.l2.getNetwork()).chainId;
    if (options.journal.anchor(`${l2ChainId}:${options.originSettler}:${destinationChainId}:${destinationAddress}`.toLowerCase()))
      options.logger.warn("the journal belonged to other settlers: cleared");
    const destination = contractAt<DestinationSettler>("DestinationSettler", destinationAddress, options.l1, "intents");
    const tokens = { l1: l1Token, l2: l2Token };
    const bridge = await options.rebalance?.connect(tokens);
    const solver = new Solver(options, { origin, destination, hashes, tokens, bridge });
    await solver.#approveOutputToken(destinationAddress);
    options.logger.info(
      { solver: solver.address, originSettler: options.originSettler, destinationSettler: destinationAddress },
      "solver starting",
    );
    solver.#subscription.start();
    solver.wake();
    return solver;
  }

  /** Asks for a pass: at once, or right after the one in progress. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.#pass()
      .catch((error: unknown) =>
        this.#options.logger.warn({ reason: describeError(error) }, "solver pass failed; the next block tries again"),
      )
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Stops after the pass in progress; fills in flight stay journaled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#subscription.stop();
    await this.#running;
  }

  async #pass(): Promise<void> {
    const { l2, journal, logger } = this.#options;
    const head = await l2.getBlockNumber();
    const fresh = await readOpenedOrders({ l2, origin: this.#origin, journal, head, firstLookback: this.#options.firstLookback });
    for (const orderId of fresh)
      logger.info({ orderId, ...describeOrder(decodeOriginData(journal.get(orderId)!.originData as `0x${string}`)) }, "order seen");
    await this.#resolveFills();
    await this.#fillSeen();
    await this.#settleFilled();
    await this.#rebalance();
  }

  async #resolveFills(): Promise<void> {
    const { journal, logger } = this.#options;
    for (const order of journal.inState("filling")) {
      // One fill the node refuses to take again (its nonce now another's) must not stop the others.
      const outcome = await this.#filler.check(order).catch((error: unknown) => {
        logger.warn({ orderId: order.orderId, reason: describeError(error) }, "fill not found nor sent again; the next block tries again");
        return undefined;
      });
      if (outcome === undefined) continue;
      if (outcome.kind === "filled") {
        journal.filled(order.orderId, outcome.block);
        logger.info({ orderId: order.orderId, fillTx: order.fillHash, l1Block: outcome.block }, "order filled");
      } else if (outcome.kind === "taken") {
        journal.skip(order.orderId, outcome.reason);
        logger.info({ orderId: order.orderId, reason: outcome.reason }, "order left");
      } else this.#awaitFill(order);
    }
  }

  async #fillSeen(): Promise<void> {
    const { journal, logger, l1, l2, policy } = this.#options;
    const seen = journal.inState("seen");
    if (seen.length === 0) return;
    const [l1Block, l1Fees, l2Fees, inventory] = await Promise.all([
      l1.getBlock("latest"),
      l1.getFeeData(),
      l2.getFeeData(),
      this.#filler.inventory(this.#tokens.l1),
    ]);
    const l1GasPrice = l1Fees.maxFeePerGas ?? l1Fees.gasPrice ?? 0n;
    const gasCost = FILL_GAS * l1GasPrice + SETTLE_GAS * (l2Fees.maxFeePerGas ?? l2Fees.gasPrice ?? 0n);
    for (const order of seen) {
      const terms = decodeOriginData(order.originData as `0x${string}`);
      if (terms.fillDeadline < l1Block!.timestamp) {
        journal.expire(order.orderId, "its fill deadline passed");
        continue;
      }
      const decision = quote(terms, { now: l1Block!.timestamp, l1GasPrice, inventory, tokens: this.#tokens, gasCost }, policy);
      if (!decision.fill) {
        if (decision.retry === true) logger.debug({ orderId: order.orderId, reason: decision.reason }, "order not filled yet");
        else {
          journal.skip(order.orderId, decision.reason);
          logger.info({ orderId: order.orderId, reason: decision.reason }, "order declined");
        }
        continue;
      }
      try {
        const hash = await this.#filler.send(order);
        if (terms.outputToken === this.#tokens.l1) inventory.token -= terms.outputAmount;
        else inventory.eth -= terms.outputAmount;
        logger.info({ orderId: order.orderId, fillTx: hash, fee: decision.fee.toString() }, "fill sent");
        this.#awaitFill(journal.get(order.orderId)!);
      } catch (error) {
        this.#fillRefused(order, error);
      }
    }
  }

  /** A fill refused before it was signed (the estimate) or at its broadcast: said, and tried again next block unless final. */
  #fillRefused(order: JournaledOrder, error: unknown): void {
    const { journal, logger } = this.#options;
    const reason = describeError(error);
    const current = journal.get(order.orderId)!;
    if (current.state === "seen" && /AlreadyFilled/.test(reason)) {
      journal.skip(order.orderId, "filled by another filler");
      logger.info({ orderId: order.orderId }, "order left: filled by another filler");
    } else if (current.state === "seen" && /FillExpired/.test(reason)) journal.expire(order.orderId, "its fill deadline passed");
    else logger.warn({ orderId: order.orderId, reason }, "fill not sent; the next block tries again");
  }

  /** Wakes a pass when a journaled fill is mined (once per fill and process). */
  #awaitFill(order: JournaledOrder): void {
    if (this.#waiting.has(order.orderId)) return;
    this.#waiting.add(order.orderId);
    this.#filler
      .waitMined(order.fillHash!)
      .catch(() => undefined)
      .finally(() => {
        this.#waiting.delete(order.orderId);
        this.wake();
      });
  }

  async #settleFilled(): Promise<void> {
    const { journal, logger } = this.#options;
    const filled = journal.inState("filled");
    if (filled.length === 0) return;
    const earliest = Math.min(...filled.map((order) => order.fillBlock!));
    const provable = await this.#settler.provableBlock(earliest);
    if (provable === undefined) return;
    const ready = filled.filter((order) => order.fillBlock! <= provable);
    const outcomes = await Promise.allSettled(
      ready.map((order) => this.#settler.settle(order, provable, (hash) => journal.settling(order.orderId, hash))),
    );
    for (const [i, outcome] of outcomes.entries()) {
      const order = ready[i];
      if (outcome.status === "rejected") {
        // A mined revert carries its receipt: its gas tells an exhausted limit from a refusal.
        const receipt = (outcome.reason as { receipt?: { gasUsed?: bigint; blockNumber?: number; hash?: string } }).receipt;
        logger.warn(
          {
            orderId: order.orderId,
            reason: describeError(outcome.reason),
            ...(receipt === undefined ? {} : { settleTx: receipt.hash, l2Block: receipt.blockNumber, gasUsed: String(receipt.gasUsed) }),
          },
          "settlement failed; the next block tries again",
        );
        this.#l2Signer.reset();
      } else if (outcome.value.kind === "settled") {
        journal.settled(order.orderId);
        logger.info({ orderId: order.orderId, settleTx: outcome.value.hash, l1Block: provable }, "order settled");
      } else if (outcome.value.kind === "refunded") {
        journal.expire(order.orderId, "refunded to its user before settlement");
        logger.error({ orderId: order.orderId }, "a filled order was refunded before it was settled: its escrow is lost to the solver");
      }
    }
  }

  async #rebalance(): Promise<void> {
    if (this.#rebalancer === undefined) return;
    const { l2 } = this.#options;
    const erc20 = new Contract(this.#tokens.l2, ERC20_ABI, l2);
    const [l1Inventory, l2Eth, l2Tokens] = await Promise.all([
      this.#filler.inventory(this.#tokens.l1),
      l2.getBalance(this.address),
      erc20.balanceOf(this.address) as Promise<bigint>,
    ]);
    const sent = await this.#rebalancer.pass(l1Inventory, { eth: l2Eth, token: l2Tokens });
    if (sent) {
      // The bridge sent from the same key on both chains: count the nonces from the nodes again.
      this.#l2Signer.reset();
      this.#filler.resetNonce();
    }
  }

  /** Grants the destination settler the L1 token for every fill to come, once. */
  async #approveOutputToken(destination: string): Promise<void> {
    const token = new Contract(this.#tokens.l1, ERC20_ABI, new Wallet(this.#options.key, this.#options.l1));
    if (((await token.allowance(this.address, destination)) as bigint) >= MaxUint256 / 2n) return;
    const approval = (await token.approve(destination, MaxUint256)) as ContractTransactionResponse;
    await approval.wait();
  }
}
