import type { Bridge } from "@avn/bridge";
import { Contract, type ContractTransactionResponse, MaxUint256, NonceManager, type JsonRpcProvider, Wallet } from "ethers";
import type { Logger } from "pino";

import type {
  DestinationSettler,
  L1BlockHashes,
  L1OriginSettler,
  L2DestinationSettler,
  OriginSettler,
  StorageProofVerifier,
} from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";
import { describeError } from "../common/describe-error.ts";
import { JsonRpcSubscription } from "../common/json-rpc-subscription.ts";
import { FillLane } from "./fill-lane.ts";
import { Filler } from "./filler.ts";
import type { SolverJournal } from "./journal.ts";
import type { SolverPolicy } from "./policy.ts";
import { Rebalancer, type RebalancePolicy } from "./rebalancer.ts";
import { Reporter } from "./reporter.ts";
import { Settler } from "./settler.ts";

/**
 * Gas the policy charges an ETH order for. A fast withdrawal: its fill (about 65k on L1) and its settlement with a
 * proof (about 120k on the L2). A fast deposit: its fill (on the L2) and its report's proof and finalization on L1
 * (about 400k, shared by the orders of a report; counted whole, as a report may carry one order).
 */
const FILL_GAS = 80_000n;
const SETTLE_GAS = 300_000n;
const REPORT_L1_GAS = 400_000n;

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
  /** The L1's WebSocket endpoint, optional: each new L1 block wakes the solver too (fast deposits are seen at once). */
  l1WsUrl?: string;
  /** The solver's key: the same account fills and is repaid on both chains. */
  key: string;
  /** The L2's origin settler (fast withdrawals, L2 → L1). */
  originSettler: string;
  journal: SolverJournal;
  policy: SolverPolicy;
  /** The standard bridge for the settlers' tokens, which rebalancing and fast deposits' reports need. */
  connectBridge?(tokens: { l1: string; l2: string }): Promise<Bridge>;
  /** Rebalancing through the standard bridge (off without it; needs `connectBridge`). */
  rebalance?: RebalancePolicy;
  /**
   * Fast deposits (L1 → L2; off without it; needs `connectBridge`): the L1's origin settler, their own journal, and
   * how long a fill may wait for others to share its report (seconds of L2 time).
   */
  deposits?: { originSettler: string; journal: SolverJournal; reportDelaySeconds: number };
  /** How far back the first run looks for `Open` events, in blocks of each origin chain. */
  firstLookback: number;
  logger: Logger;
}

/** What a pass does: everything, or only read the orders and send the fills. */
type PassKind = "full" | "fills";

/** The fast deposits' side of the solver, when it runs one. */
interface DepositParts {
  lane: FillLane;
  filler: Filler;
  reporter: Reporter;
  destination: string;
}

/**
 * The intent layer's solver (docs/intents.md). Fast withdrawals (L2 → L1): it reads every `Open` event of the L2's
 * origin settler, fills on L1 the orders its policy finds profitable, and settles each fill on the L2 with a storage
 * proof of the fill's record. Fast deposits (L1 → L2, with `deposits`): it reads the L1 origin settler's orders,
 * fills them on the L2, and reports the fills to L1, where the escrows are paid once the reports are relayed. It
 * moves its earnings back to L1 through the standard bridge when a side runs low. Every L2 block wakes it for a full
 * pass, and every L1 block (with `l1WsUrl`) for a pass that only fills; a pass asked for while one runs follows it.
 * Its steps run one after another, each counting its nonces from the nodes again, since all send from one key. What it
 * does is journaled first (`SolverJournal`, one per direction), so a restart goes on where it stopped.
 */
export class Solver {
  readonly address: string;
  readonly #options: SolverOptions;
  readonly #withdrawals: FillLane;
  readonly #filler: Filler;
  readonly #settler: Settler;
  readonly #l2Signer: NonceManager;
  readonly #rebalancer: Rebalancer | undefined;
  readonly #deposits: DepositParts | undefined;
  readonly #tokens: { l1: string; l2: string };
  readonly #subscriptions: JsonRpcSubscription[];
  #running: Promise<void> | undefined;
  /** The pass asked for while one runs: run after it (a full pass covers a fills-only one). */
  #next: PassKind | undefined;
  #stopped = false;

  private constructor(
    options: SolverOptions,
    parts: {
      origin: OriginSettler;
      destination: DestinationSettler;
      hashes: L1BlockHashes;
      tokens: { l1: string; l2: string };
      bridge: Bridge | undefined;
      deposits: { origin: L1OriginSettler; destination: L2DestinationSettler } | undefined;
    },
  ) {
    this.#options = options;
    const { l1, l2, policy, journal, logger, firstLookback } = options;
    const l1Wallet = new Wallet(options.key, l1);
    const l2Wallet = new Wallet(options.key, l2);
    this.address = l1Wallet.address;
    this.#tokens = parts.tokens;
    this.#l2Signer = new NonceManager(l2Wallet);
    const wake = () => this.wake();
    const l1GasPrice = async () => gasPrice(l1);
    this.#filler = new Filler({ provider: l1, wallet: l1Wallet, destination: parts.destination, journal });
    this.#withdrawals = new FillLane({
      name: "withdrawals",
      origin: { provider: l2, settler: parts.origin },
      destination: { provider: l1 },
      filler: this.#filler,
      journal,
      policy,
      tokens: { input: parts.tokens.l2, output: parts.tokens.l1 },
      gasReserve: policy.l1GasReserve,
      gasCost: async () => FILL_GAS * (await gasPrice(l1)) + SETTLE_GAS * (await gasPrice(l2)),
      l1GasPrice,
      firstLookback,
      logger,
      wake,
    });
    this.#settler = new Settler({
      l1,
      origin: parts.origin,
      hashes: parts.hashes,
      destination: parts.destination.target as string,
      signer: this.#l2Signer,
    });
    this.#rebalancer =
      options.rebalance === undefined || parts.bridge === undefined
        ? undefined
        : new Rebalancer({ bridge: parts.bridge, journal, policy: options.rebalance, logger });
    if (parts.deposits !== undefined && options.deposits !== undefined && parts.bridge !== undefined) {
      const depositJournal = options.deposits.journal;
      const filler = new Filler({ provider: l2, wallet: l2Wallet, destination: parts.deposits.destination, journal: depositJournal });
      this.#deposits = {
        filler,
        destination: parts.deposits.destination.target as string,
        lane: new FillLane({
          name: "deposits",
          origin: { provider: l1, settler: parts.deposits.origin },
          destination: { provider: l2 },
          filler,
          journal: depositJournal,
          policy,
          tokens: { input: parts.tokens.l1, output: parts.tokens.l2 },
          gasReserve: policy.l2GasReserve,
          gasCost: async () => (FILL_GAS + SETTLE_GAS) * (await gasPrice(l2)) + REPORT_L1_GAS * (await gasPrice(l1)),
          l1GasPrice,
          firstLookback,
          logger,
          wake,
        }),
        reporter: new Reporter({
          l2,
          destination: parts.deposits.destination.connect(this.#l2Signer),
          origin: parts.deposits.origin,
          bridge: parts.bridge,
          journal: depositJournal,
          logger,
          delaySeconds: options.deposits.reportDelaySeconds,
        }),
      };
    }
    const heads = (chain: string, url: string, kind: PassKind) =>
      new JsonRpcSubscription({
        url,
        params: ["newHeads"],
        onEvent: () => this.wake(kind),
        // A block mined while (re)subscribing was announced to nobody: read the chain once more.
        onSubscribed: () => this.wake(kind),
        onClose: () => options.logger.warn(`the ${chain} head subscription closed; reconnecting`),
      });
    this.#subscriptions = [
      heads("L2", options.l2WsUrl, "full"),
      ...(options.l1WsUrl === undefined ? [] : [heads("L1", options.l1WsUrl, "fills")]),
    ];
  }

  /** Reads the settlers' settings, anchors the journals to them, grants the destination settlers the tokens once, and starts. */
  static async start(options: SolverOptions): Promise<Solver> {
    const origin = contractAt<OriginSettler>("OriginSettler", options.originSettler, options.l2, "intents");
    const [destinationAddress, destinationChainId, l2Token, l1Token, verifierAddress] = await Promise.all([
      origin.DESTINATION_SETTLER(),
      origin.DESTINATION_CHAIN_ID(),
      origin.INPUT_TOKEN(),
      origin.OUTPUT_TOKEN(),
      origin.VERIFIER(),
    ]);
    const [l1Network, l2Network] = await Promise.all([options.l1.getNetwork(), options.l2.getNetwork()]);
    if (l1Network.chainId !== destinationChainId)
      throw new Error(`The L1 RPC serves chain ${l1Network.chainId}; the origin settler's destination is chain ${destinationChainId}`);
    const verifier = contractAt<StorageProofVerifier>("StorageProofVerifier", verifierAddress, options.l2, "proofs");
    const hashes = contractAt<L1BlockHashes>("L1BlockHashes", await verifier.L1_BLOCK_HASHES(), options.l2, "proofs");
    if (options.journal.anchor(`${l2Network.chainId}:${options.originSettler}:${destinationChainId}:${destinationAddress}`.toLowerCase()))
      options.logger.warn("the journal belonged to other settlers: cleared");
    const destination = contractAt<DestinationSettler>("DestinationSettler", destinationAddress, options.l1, "intents");
    const tokens = { l1: l1Token, l2: l2Token };
    const deposits = options.deposits === undefined ? undefined : await Solver.#depositSettlers(options, tokens, l2Network.chainId);
    const bridge = options.rebalance !== undefined || deposits !== undefined ? await options.connectBridge?.(tokens) : undefined;
    if (deposits !== undefined && bridge === undefined)
      throw new Error("Fast deposits need the standard bridge (its reports are withdrawals)");
    const solver = new Solver(options, { origin, destination, hashes, tokens, bridge, deposits });
    await solver.#approve(tokens.l1, destinationAddress, options.l1);
    if (deposits !== undefined) await solver.#approve(tokens.l2, deposits.destination.target as string, options.l2);
    options.logger.info(
      {
        solver: solver.address,
        originSettler: options.originSettler,
        destinationSettler: destinationAddress,
        ...(deposits === undefined
          ? {}
          : { l1OriginSettler: options.deposits!.originSettler, l2DestinationSettler: deposits.destination.target }),
      },
      "solver starting",
    );
    for (const subscription of solver.#subscriptions) subscription.start();
    solver.wake();
    return solver;
  }

  /** The fast deposits' settlers, checked against the withdrawals' (same tokens, the same L2), and their journal anchored. */
  static async #depositSettlers(options: SolverOptions, tokens: { l1: string; l2: string }, l2ChainId: bigint) {
    const { originSettler, journal } = options.deposits!;
    const origin = contractAt<L1OriginSettler>("L1OriginSettler", originSettler, options.l1, "intents");
    const [destinationAddress, destinationChainId, inputToken, outputToken] = await Promise.all([
      origin.DESTINATION_SETTLER(),
      origin.DESTINATION_CHAIN_ID(),
      origin.INPUT_TOKEN(),
      origin.OUTPUT_TOKEN(),
    ]);
    if (destinationChainId !== l2ChainId)
      throw new Error(`The L2 RPC serves chain ${l2ChainId}; the L1 origin settler's destination is chain ${destinationChainId}`);
    if (inputToken !== tokens.l1 || outputToken !== tokens.l2)
      throw new Error("The L1 origin settler deals in other tokens than the L2's: they are not one deployment's");
    const l1ChainId = (await options.l1.getNetwork()).chainId;
    if (journal.anchor(`${l1ChainId}:${originSettler}:${destinationChainId}:${destinationAddress}`.toLowerCase()))
      options.logger.warn("the deposits' journal belonged to other settlers: cleared");
    const destination = contractAt<L2DestinationSettler>("L2DestinationSettler", destinationAddress, options.l2, "intents");
    return { origin, destination };
  }

  /**
   * Asks for a pass: at once, or right after the one in progress. A `fills` pass (an L1 head) reads the orders and
   * sends the fills only, which it does not wait for, so that it is over in moments; a `full` pass (an L2 head, a
   * mined fill) also settles, reports and rebalances, and waits for those transactions.
   */
  wake(kind: PassKind = "full"): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#next = this.#next === "full" || kind === "full" ? "full" : "fills";
      return;
    }
    this.#running = this.#pass(kind)
      .catch((error: unknown) =>
        this.#options.logger.warn({ reason: describeError(error) }, "solver pass failed; the next block tries again"),
      )
      .finally(() => {
        this.#running = undefined;
        const next = this.#next;
        this.#next = undefined;
        if (next !== undefined) this.wake(next);
      });
  }

  /** Stops after the pass in progress; fills in flight stay journaled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const subscription of this.#subscriptions) subscription.stop();
    await this.#running;
  }

  /** The fills first, in both directions (none waits to be mined), then what waits for its transactions. */
  async #pass(kind: PassKind): Promise<void> {
    this.#resetNonces();
    await this.#withdrawals.pass();
    if (this.#deposits !== undefined) {
      this.#resetNonces();
      await this.#deposits.lane.pass();
    }
    if (kind === "fills") return;
    this.#resetNonces();
    await this.#settleFilled();
    if (this.#deposits !== undefined) {
      this.#resetNonces();
      await this.#deposits.reporter.pass();
    }
    this.#resetNonces();
    await this.#rebalance();
  }

  /**
   * Every step sends from the same key, the fills with nonces they count themselves: between steps, each counter
   * starts again from the node's pending count, which includes what the step before sent.
   */
  #resetNonces(): void {
    this.#filler.resetNonce();
    this.#deposits?.filler.resetNonce();
    this.#l2Signer.reset();
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
        logger.info({ lane: "withdrawals", orderId: order.orderId, settleTx: outcome.value.hash, l1Block: provable }, "order settled");
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
    await this.#rebalancer.pass(l1Inventory, { eth: l2Eth, token: l2Tokens });
  }

  /** Grants a destination settler `token` for every fill to come, once. */
  async #approve(token: string, destination: string, provider: JsonRpcProvider): Promise<void> {
    const erc20 = new Contract(token, ERC20_ABI, new Wallet(this.#options.key, provider));
    if (((await erc20.allowance(this.address, destination)) as bigint) >= MaxUint256 / 2n) return;
    const approval = (await erc20.approve(destination, MaxUint256)) as ContractTransactionResponse;
    await approval.wait();
  }
}

async function gasPrice(provider: JsonRpcProvider): Promise<bigint> {
  const fees = await provider.getFeeData();
  return fees.maxFeePerGas ?? fees.gasPrice ?? 0n;
}
