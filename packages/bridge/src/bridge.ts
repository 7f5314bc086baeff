import { CrossChainMessenger, hashLowLevelMessage, MessageDirection, MessageStatus, type CrossChainMessage } from "@eth-optimism/sdk";
import { ethers } from "ethers";

import { BridgeError } from "./errors.ts";
import type { BridgeNetwork } from "./network.ts";

/** The SDK's message statuses by name, as the CLI prints them. */
export type MessageStatusName = keyof typeof MessageStatus;

export function statusName(status: MessageStatus): MessageStatusName {
  return MessageStatus[status] as MessageStatusName;
}

export interface MessageInfo {
  direction: "L1_TO_L2" | "L2_TO_L1";
  status: MessageStatusName;
}

export interface WaitOptions {
  /** Called with each status seen, the first one included. */
  onStatus?: (status: MessageStatusName) => void;
  timeoutMs?: number;
}

const ERC20_ABI = [
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address owner, address spender) view returns (uint256)",
];
/** An ERC-20 balance, typed (ethers v5 types a contract's calls as `any`). */
async function balanceOf(token: ethers.Contract, owner: string): Promise<ethers.BigNumber> {
  const [balance] = (await token.functions.balanceOf(owner)) as [ethers.BigNumber];
  return balance;
}

// The SDK needs the legacy (pre-Bedrock) L1 contracts named too; an OP chain born on Bedrock has none.
const NO_LEGACY_CONTRACT = ethers.constants.AddressZero;

/**
 * Deposits and withdrawals of ETH and the primary token through the OP standard bridge, with the OP
 * SDK doing the protocol work (message hashing, output lookup, withdrawal proofs). This class adds what
 * a person at a terminal needs: checks before spending gas (network, balance, allowance, message
 * status), errors that say what to do next, and status progress while waiting.
 */
export class Bridge {
  readonly network: BridgeNetwork;
  readonly messenger: CrossChainMessenger;
  readonly l1Signer: ethers.Wallet;
  readonly l2Signer: ethers.Wallet;

  private constructor(network: BridgeNetwork, messenger: CrossChainMessenger, l1Signer: ethers.Wallet, l2Signer: ethers.Wallet) {
    this.network = network;
    this.messenger = messenger;
    this.l1Signer = l1Signer;
    this.l2Signer = l2Signer;
  }

  /** Connects to both chains with `privateKey` and checks that each RPC serves the chain the network expects. */
  static async connect(network: BridgeNetwork, privateKey: string): Promise<Bridge> {
    const l1Provider = new ethers.providers.StaticJsonRpcProvider(network.l1.rpcUrl, network.l1.chainId);
    const l2Provider = new ethers.providers.StaticJsonRpcProvider(network.l2.rpcUrl, network.l2.chainId);
    l1Provider.pollingInterval = network.pollIntervalMs;
    l2Provider.pollingInterval = network.pollIntervalMs;
    await assertChain(l1Provider, "L1", network.l1.chainId, network.name);
    await assertChain(l2Provider, "L2", network.l2.chainId, network.name);
    let l1Signer: ethers.Wallet;
    try {
      l1Signer = new ethers.Wallet(privateKey, l1Provider);
    } catch {
      throw new BridgeError("CONFIGURATION", "The private key is not a valid 32-byte hex key"); // never echo it
    }
    const l2Signer = l1Signer.connect(l2Provider);
    await assertProofSystemConfigured(l1Provider, network);
    const messenger = new CrossChainMessenger({
      l1ChainId: network.l1.chainId,
      l2ChainId: network.l2.chainId,
      l1SignerOrProvider: l1Signer,
      l2SignerOrProvider: l2Signer,
      bedrock: true,
      contracts: {
        l1: {
          ...network.opContracts,
          // The SDK reads the portal under this name on fault-proof chains (portal 3.x).
          OptimismPortal2: network.opContracts.OptimismPortal,
          StateCommitmentChain: NO_LEGACY_CONTRACT,
          CanonicalTransactionChain: NO_LEGACY_CONTRACT,
          BondManager: NO_LEGACY_CONTRACT,
        },
      },
    });
    return new Bridge(network, messenger, l1Signer, l2Signer);
  }

  get address(): string {
    return this.l1Signer.address;
  }

  /** Sends `amount` wei of ETH from L1 to `recipient` (default: the sender) on L2. Returns the L1 transaction hash. */
  async depositEth(amount: bigint, recipient?: string): Promise<string> {
    await this.#assertEthBalance(this.l1Signer, amount, "L1");
    const tx = await this.messenger.depositETH(amount.toString(), { recipient, overrides: this.#estimateAsSender() });
    await tx.wait();
    return tx.hash;
  }

  /**
   * Sends `amount` base units of the primary token from L1 to L2. The L1 standard bridge pulls the tokens,
   * so it needs an allowance: with `approve`, a missing allowance is granted first; without it, a
   * missing allowance is an error that says so (no gas is spent).
   */
  async depositPrimaryToken(amount: bigint, options: { approve?: boolean; recipient?: string } = {}): Promise<string> {
    const { l1, l2 } = this.#primaryTokens();
    const token = new ethers.Contract(l1, ERC20_ABI, this.l1Signer);
    const balance = (await balanceOf(token, this.address)).toBigInt();
    if (balance < amount) {
      throw new BridgeError("INSUFFICIENT_BALANCE", `The L1 balance is ${balance} base units of the primary token, less than ${amount}`);
    }
    const allowance = BigInt((await this.messenger.approval(l1, l2)).toString());
    if (allowance < amount) {
      if (!options.approve) {
        throw new BridgeError(
          "ALLOWANCE_TOO_LOW",
          `The L1 standard bridge may spend ${allowance} base units of your primary token, less than ${amount}: ` +
            "approve it first (the CLI's --approve does)",
        );
      }
      await (await this.messenger.approveERC20(l1, l2, amount.toString())).wait();
    }
    const tx = await this.messenger.depositERC20(l1, l2, amount.toString(), {
      recipient: options.recipient,
      overrides: this.#estimateAsSender(),
    });
    await tx.wait();
    return tx.hash;
  }

  /** Starts a withdrawal of `amount` wei of ETH from L2 to L1. Returns the L2 transaction hash. */
  async withdrawEth(amount: bigint, recipient?: string): Promise<string> {
    await this.#assertEthBalance(this.l2Signer, amount, "L2");
    const tx = await this.messenger.withdrawETH(amount.toString(), { recipient, overrides: this.#estimateAsSender() });
    await tx.wait();
    return tx.hash;
  }

  /** Starts a withdrawal of `amount` base units of the primary token from L2 to L1 (the bridge burns them on L2). */
  async withdrawPrimaryToken(amount: bigint, recipient?: string): Promise<string> {
    const { l1, l2 } = this.#primaryTokens();
    const token = new ethers.Contract(l2, ERC20_ABI, this.l2Signer);
    const balance = (await balanceOf(token, this.address)).toBigInt();
    if (balance < amount) {
      throw new BridgeError("INSUFFICIENT_BALANCE", `The L2 balance is ${balance} base units of the primary token, less than ${amount}`);
    }
    const tx = await this.messenger.withdrawERC20(l1, l2, amount.toString(), { recipient, overrides: this.#estimateAsSender() });
    await tx.wait();
    return tx.hash;
  }

  /** The direction and status of the (first) cross-chain message a transaction sent. */
  async status(txHash: string): Promise<MessageInfo> {
    const message = await this.#message(txHash);
    const status = await this.messenger.getMessageStatus(message);
    return {
      direction: message.direction === MessageDirection.L1_TO_L2 ? "L1_TO_L2" : "L2_TO_L1",
      status: statusName(status),
    };
  }

  /** Proves a withdrawal on L1 once an L2 output covering it is posted. Returns the L1 transaction hash. */
  async prove(txHash: string): Promise<string> {
    const message = await this.#withdrawal(txHash);
    const status = await this.messenger.getMessageStatus(message);
    switch (status) {
      case MessageStatus.STATE_ROOT_NOT_PUBLISHED:
        throw new BridgeError(
          "NOT_PROVABLE_YET",
          "No L2 output covering this withdrawal is on L1 yet; wait for READY_TO_PROVE (the CLI's `wait --until READY_TO_PROVE`)",
        );
      case MessageStatus.IN_CHALLENGE_PERIOD:
      case MessageStatus.READY_FOR_RELAY:
        throw new BridgeError("ALREADY_PROVEN", "This withdrawal is already proven; finalize it once the finalization period is over");
      case MessageStatus.RELAYED:
        throw alreadyFinalized();
    }
    const tx = await this.messenger.proveMessage(message);
    await tx.wait();
    return tx.hash;
  }

  /** Finalizes a proven withdrawal on L1 after the finalization period. Returns the L1 transaction hash. */
  async finalize(txHash: string): Promise<string> {
    const message = await this.#withdrawal(txHash);
    const status = await this.messenger.getMessageStatus(message);
    switch (status) {
      case MessageStatus.STATE_ROOT_NOT_PUBLISHED:
      case MessageStatus.READY_TO_PROVE:
        throw new BridgeError("NOT_PROVEN", "This withdrawal is not proven yet: prove it first");
      case MessageStatus.IN_CHALLENGE_PERIOD: {
        const ready = await this.#finalizableAt(message);
        throw new BridgeError(
          "FINALIZATION_PERIOD_NOT_OVER",
          `The finalization period of this withdrawal is not over: it can be finalized from ${new Date(ready * 1000).toISOString()} (L1 time)`,
        );
      }
      case MessageStatus.RELAYED:
        throw alreadyFinalized();
    }
    try {
      const tx = await this.messenger.finalizeMessage(message);
      await tx.wait();
      return tx.hash;
    } catch (error) {
      // Someone else finalized it between the status check and this transaction.
      if (String((error as Error).message).includes("already been finalized")) throw alreadyFinalized(error);
      throw error;
    }
  }

  /**
   * Polls a transaction's message until it reaches `target` (or a later status), reporting each status
   * seen. A deposit stops at FAILED_L1_TO_L2_MESSAGE too, since it then needs a replay, not patience.
   */
  async waitFor(txHash: string, target: MessageStatusName, options: WaitOptions = {}): Promise<MessageStatusName> {
    const message = await this.#message(txHash);
    const targetStatus = MessageStatus[target];
    const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
    let last: MessageStatus | undefined;
    for (;;) {
      const status = await this.messenger.getMessageStatus(message);
      if (status !== last) {
        options.onStatus?.(statusName(status));
        last = status;
      }
      if (status >= targetStatus || status === MessageStatus.FAILED_L1_TO_L2_MESSAGE) return statusName(status);
      if (Date.now() > deadline) {
        throw new BridgeError("TIMEOUT", `The message is still ${statusName(status)}, not ${target}, after waiting`);
      }
      await new Promise((resolve) => setTimeout(resolve, this.network.pollIntervalMs));
    }
  }

  async #message(txHash: string): Promise<CrossChainMessage> {
    if (!ethers.utils.isHexString(txHash, 32)) throw new BridgeError("INVALID_ARGUMENT", `${txHash} is not a transaction hash`);
    let messages;
    try {
      messages = await this.messenger.getMessagesByTransaction(txHash);
    } catch (error) {
      // The SDK's words when neither chain has a receipt; anything else (an RPC failure) is not ours to rename.
      if (!/unable to find transaction receipt/i.test(String((error as Error).message))) throw error;
      throw new BridgeError("MESSAGE_NOT_FOUND", `Transaction ${txHash} is not mined on L1 or L2 of ${this.network.name}`, {
        cause: error,
      });
    }
    if (messages.length === 0) throw new BridgeError("MESSAGE_NOT_FOUND", `Transaction ${txHash} sent no cross-chain message`);
    return messages[0];
  }

  async #withdrawal(txHash: string): Promise<CrossChainMessage> {
    const message = await this.#message(txHash);
    if (message.direction !== MessageDirection.L2_TO_L1) {
      throw new BridgeError("NOT_A_WITHDRAWAL", `Transaction ${txHash} is a deposit: deposits need no proof or finalization`);
    }
    return message;
  }

  async #finalizableAt(message: CrossChainMessage): Promise<number> {
    const proven = await this.messenger.getProvenWithdrawal(hashLowLevelMessage(await this.messenger.toLowLevelMessage(message)));
    const period = await this.messenger.getChallengePeriodSeconds();
    return Number(proven?.timestamp ?? 0) + period;
  }

  /**
   * The SDK estimates a transaction's gas before sending it without saying who sends it, so the node
   * estimates for the zero address, which fails for anything that carries ETH. Naming the sender fixes
   * the estimate; the signer sends from the same address anyway.
   */
  #estimateAsSender(): ethers.Overrides {
    // `from` is a valid override of ethers v5 contract calls; the SDK's type leaves it out.
    const overrides: ethers.CallOverrides = { from: this.address };
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- widens nothing at compile time, but names the SDK's type on purpose
    return overrides as ethers.Overrides;
  }

  #primaryTokens(): { l1: string; l2: string } {
    const { l1, l2 } = this.network.primaryToken;
    if (l1 === undefined || l2 === undefined) {
      throw new BridgeError("CONFIGURATION", `The primary token is not deployed on both chains of ${this.network.name}`);
    }
    return { l1, l2 };
  }

  async #assertEthBalance(signer: ethers.Wallet, amount: bigint, chain: string): Promise<void> {
    const balance = BigInt((await signer.getBalance()).toString());
    if (balance < amount) throw new BridgeError("INSUFFICIENT_BALANCE", `The ${chain} ETH balance is ${balance} wei, less than ${amount}`);
  }
}

async function assertChain(provider: ethers.providers.JsonRpcProvider, chain: string, expected: number, networkName: string) {
  let actual: number;
  try {
    actual = Number(await provider.send("eth_chainId", []));
  } catch (error) {
    // The URL is left out on purpose: hosted RPC URLs carry API keys.
    throw new BridgeError("CONFIGURATION", `The ${chain} RPC of ${networkName} does not answer`, { cause: error });
  }
  if (actual !== expected) {
    throw new BridgeError("WRONG_NETWORK", `The ${chain} RPC serves chain ${actual}, but ${networkName} expects chain ${expected}`);
  }
}

/**
 * SDK 3.3.3 proves against the L2OutputOracle when the portal's version is below 3.0.0 and against
 * dispute games from 3.0.0 on; the latter needs the DisputeGameFactory address, which only the chain's
 * configuration can give.
 */
async function assertProofSystemConfigured(l1: ethers.providers.JsonRpcProvider, network: BridgeNetwork): Promise<void> {
  const portal = new ethers.Contract(network.opContracts.OptimismPortal, ["function version() view returns (string)"], l1);
  let version: string;
  try {
    [version] = (await portal.functions.version()) as [string];
  } catch (error) {
    throw new BridgeError("CONFIGURATION", `The configured OptimismPortal of ${network.name} does not answer version()`, { cause: error });
  }
  if (Number(version.split(".")[0]) >= 3 && network.opContracts.DisputeGameFactory === undefined) {
    throw new BridgeError(
      "CONFIGURATION",
      `The OptimismPortal of ${network.name} is version ${version} (fault proofs): add the chain's DisputeGameFactory address to its configuration`,
    );
  }
}

function alreadyFinalized(cause?: unknown): BridgeError {
  return new BridgeError("ALREADY_FINALIZED", "This withdrawal is already finalized on L1: nothing left to do", { cause });
}
