import {
  encodeOrderData,
  NATIVE_TOKEN,
  ORDER_DATA_TYPE,
  PERMIT2_ORDER_TYPES,
  permit2Domain,
  permit2OrderMessage,
  type GaslessOrder,
  type OrderStatusName,
  type OrderTerms,
} from "@avn/protocol/intents";
import {
  erc20Abi,
  isAddress,
  isAddressEqual,
  isHex,
  parseEventLogs,
  size,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
} from "viem";
import { getBalance, getBlock, getChainId, readContract, signTypedData, waitForTransactionReceipt, writeContract } from "viem/actions";

import { InvalidArgumentError, TransactionRevertedError } from "./errors.ts";
import { destinationSettlerAbi, originSettlerAbi } from "./intents-abi.ts";

/**
 * The intent layer's fast withdrawal (docs/intents.md): a user on the L2 opens an ERC-7683 order that escrows
 * its input in the origin settler; a filler pays the output to the recipient on L1 at once, through the
 * destination settler, and is repaid the escrow on the L2 once a storage proof of that fill reaches it. If no
 * one fills before the fill deadline, the escrow goes back to the user after the settlement window.
 */

/**
 * `openOrder`'s default time to fill, in seconds after the latest block: 10 minutes, long enough for a filler to
 * see the order and get an L1 transaction mined, short enough that an unfilled order's escrow is refundable soon
 * after (fill deadline + the settler's `SETTLEMENT_WINDOW`). It is capped at the settler's `MAX_FILL_PERIOD`.
 */
export const DEFAULT_FILL_PERIOD_SECONDS = 600;

const UINT256_MAX = 2n ** 256n - 1n;
const UINT32_MAX = 2 ** 32 - 1;
const STATUS_NAMES: readonly OrderStatusName[] = ["unknown", "open", "settled", "refunded"];

type WalletClient = Client<Transport, Chain | undefined, Account | undefined>;

export interface OpenOrderOptions {
  /** The `OriginSettler` on the L2 (the network's, from its deployment records). */
  originSettler: Address;
  /**
   * What the user gives and asks for: `inputAmount` of `inputToken` escrowed here, `outputAmount` of
   * `outputToken` paid to `recipient` on `destinationChainId` (the L1). A token is `NATIVE_TOKEN` (address 0)
   * for ETH or the settler's `INPUT_TOKEN` / `OUTPUT_TOKEN`. The difference between input and output is the
   * filler's fee; an output above the input is allowed (the contract allows it too) but no filler is likely
   * to take a loss, and such an order usually ends refunded.
   */
  terms: OrderTerms;
  /**
   * When the order must be filled by, in seconds (chain time): after the latest block and at most the
   * settler's `MAX_FILL_PERIOD` after it. Default: the latest block's time plus `DEFAULT_FILL_PERIOD_SECONDS`.
   */
  fillDeadline?: number;
  /** The user, when the wallet client has no account of its own. */
  account?: Account | Address;
}

export interface OpenedOrder {
  /** The order's id, as the `Open` event names it (`keccak256(originData)`). */
  orderId: Hex;
  /** Everything the order is, as the `Open` event gives it: what a filler fills with, and settlement and refund take. */
  originData: Hex;
  /** The `open` transaction. */
  transactionHash: Hex;
  /** The fill deadline the order was opened with, in seconds (chain time). */
  fillDeadline: number;
  /** The approval sent first, when the settler's allowance was short of a token input. */
  approvalTransactionHash?: Hex;
}

/** A fill on L1, as the destination settler records it. */
export interface FillRecord {
  /** Who is repaid the escrow on the L2. */
  repayTo: Address;
  /** The fill's block time on L1, in seconds. */
  filledAt: bigint;
}

export interface OrderStatusOptions {
  /** The `OriginSettler` on the L2 the order was opened in. */
  originSettler: Address;
  orderId: Hex;
  /** The L1 side, to ask for the fill record: a client on L1 and the `DestinationSettler` there. */
  destination?: { client: Client; settler: Address };
}

export interface OrderStatusResult {
  /** The order on the L2: escrowed (`open`), paid to its filler (`settled`) or back to its user (`refunded`). */
  status: OrderStatusName;
  /**
   * The L1 fill record, when `destination` was given and the order is filled there. An order can be filled and
   * still `open` here: the settlement waits for a proof of the fill to reach the L2.
   */
  filled?: FillRecord;
}

export interface SignGaslessOrderOptions {
  /** The signer, when the wallet client has no account of its own. It must be `order.user`. */
  account?: Account | Address;
}

/** What `openOrder` throws itself; viem's errors (the transport, a refused estimate with the contract's named error) pass through. */
export type OpenOrderError = InvalidArgumentError | TransactionRevertedError;

/**
 * Opens a fast withdrawal from the L2 to L1: an ERC-7683 order in the `OriginSettler`, from any viem wallet
 * client (no gas override needed; the wallet estimates as usual).
 *
 * 1. It checks the terms and options (an `InvalidArgumentError` naming the field), then against the settler and
 *    the chain: both clients on one chain, tokens the settler takes, the settler's destination chain, the fill
 *    deadline within `MAX_FILL_PERIOD` of the latest block, and the user's balance of the input. The settler's
 *    own `resolve` view then checks the order as `open` will, so that nothing is sent for an order it refuses.
 * 2. For a token input, it approves the settler for exactly `inputAmount` when its allowance is short, and waits
 *    for that transaction: an approval of more would outlive the order.
 * 3. It calls `open` (with `inputAmount` as the value for ETH), waits for the receipt, and returns the order as
 *    the `Open` event names it. Read from the event rather than recomputed: the settler assigns the order's nonce
 *    when the transaction is mined, so another order of the user's mined first would make a recomputed id wrong.
 *
 * `publicClient` reads the L2 and waits for receipts; it must be on the wallet's chain.
 */
export async function openOrder(walletClient: WalletClient, publicClient: Client, options: OpenOrderOptions): Promise<OpenedOrder> {
  const originSettler = checkedAddress(options.originSettler, "options.originSettler", { nonZero: true });
  const terms = checkedTerms(options.terms, "terms");
  if (options.fillDeadline !== undefined) checkedUint32(options.fillDeadline, "options.fillDeadline");
  const account = options.account ?? walletClient.account;
  if (account === undefined) throw new InvalidArgumentError("options.account", "The wallet client has no account: pass options.account");
  const user = typeof account === "string" ? checkedAddress(account, "options.account") : account.address;

  const fillDeadline = await checkAgainstSettler(walletClient, publicClient, originSettler, user, terms, options.fillDeadline);
  const order = { fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(terms) };
  // The settler's own checks, as `open` makes them, before anything is sent (an approval included).
  await readContract(publicClient, {
    address: originSettler,
    abi: originSettlerAbi,
    functionName: "resolve",
    args: [order],
    account: user,
  });

  const isNative = isAddressEqual(terms.inputToken, NATIVE_TOKEN);
  const approvalTransactionHash = isNative ? undefined : await approveIfShort(walletClient, publicClient, account, originSettler, terms);
  const transactionHash = await writeContract(walletClient, {
    account,
    address: originSettler,
    abi: originSettlerAbi,
    functionName: "open",
    args: [order],
    value: isNative ? terms.inputAmount : 0n,
    chain: walletClient.chain ?? null,
  });
  const receipt = await waitForTransactionReceipt(publicClient, { hash: transactionHash });
  if (receipt.status !== "success") throw new TransactionRevertedError("open", transactionHash, receipt);

  const opened = parseEventLogs({ abi: originSettlerAbi, eventName: "Open", logs: receipt.logs }).find((log) =>
    isAddressEqual(log.address, originSettler),
  );
  if (opened === undefined)
    throw new InvalidArgumentError("options.originSettler", `${originSettler} emitted no Open event: it is not an origin settler`);
  const { orderId, resolvedOrder } = opened.args;
  return {
    orderId,
    originData: resolvedOrder.fillInstructions[0].originData,
    transactionHash,
    fillDeadline: resolvedOrder.fillDeadline,
    ...(approvalTransactionHash === undefined ? {} : { approvalTransactionHash }),
  };
}

/**
 * An order's state on the L2 (`OriginSettler.orderStatus`) and, with `destination`, its fill record on L1
 * (`DestinationSettler.fills`), read at the same time: `{ status: "open", filled }` is "filled on L1, settling".
 * Throws an `InvalidArgumentError` for an argument that is not an address or a 32-byte id.
 */
export async function orderStatus(publicClient: Client, options: OrderStatusOptions): Promise<OrderStatusResult> {
  const originSettler = checkedAddress(options.originSettler, "options.originSettler", { nonZero: true });
  if (!isHex(options.orderId, { strict: true }) || size(options.orderId) !== 32)
    throw new InvalidArgumentError("options.orderId", `options.orderId must be 32 bytes of hex, not ${String(options.orderId)}`);
  const { destination } = options;
  const readFill =
    destination === undefined
      ? undefined
      : readContract(destination.client, {
          address: checkedAddress(destination.settler, "options.destination.settler", { nonZero: true }),
          abi: destinationSettlerAbi,
          functionName: "fills",
          args: [options.orderId],
        });

  const [code, fill] = await Promise.all([
    readContract(publicClient, { address: originSettler, abi: originSettlerAbi, functionName: "orderStatus", args: [options.orderId] }),
    readFill,
  ]);
  const status = STATUS_NAMES[code];
  if (status === undefined)
    throw new InvalidArgumentError("options.originSettler", `${originSettler} answered status ${code}: it is not an origin settler`);
  // An empty record (no fill) reads as zeros; a fill always has a time.
  const filled = fill !== undefined && fill[1] !== 0n ? { repayTo: fill[0], filledAt: fill[1] } : undefined;
  return filled === undefined ? { status } : { status, filled };
}

/**
 * The user's Permit2 signature of a gasless order, for anyone (a filler, a relayer) to submit with
 * `OriginSettler.openFor(gaslessOrderStruct(order), signature, "0x")`: Permit2 moves the input to the settler,
 * the order being the signed witness, so the user pays no gas. The user must have approved Permit2
 * (`PERMIT2_ADDRESS`) for the input token once. `order.nonce` is a Permit2 nonce (unordered: any number not
 * used before, e.g. random), and `openDeadline` the time by which the order must be opened. Only a token input
 * can be gasless. Throws an `InvalidArgumentError` for a malformed order, an ETH input, or a signer other than
 * `order.user`.
 */
export async function signGaslessOrder(
  walletClient: WalletClient,
  order: GaslessOrder,
  options: SignGaslessOrderOptions = {},
): Promise<Hex> {
  checkedAddress(order.originSettler, "order.originSettler", { nonZero: true });
  const user = checkedAddress(order.user, "order.user", { nonZero: true });
  checkedTerms(order.orderData, "order.orderData");
  if (isAddressEqual(order.orderData.inputToken, NATIVE_TOKEN))
    throw new InvalidArgumentError("order.orderData.inputToken", "Native ETH cannot be escrowed gaslessly: open the order with openOrder");
  checkedUint256(order.nonce, "order.nonce");
  checkedUint256(order.originChainId, "order.originChainId");
  checkedUint32(order.openDeadline, "order.openDeadline");
  checkedUint32(order.fillDeadline, "order.fillDeadline");
  const account = options.account ?? walletClient.account;
  if (account === undefined) throw new InvalidArgumentError("options.account", "The wallet client has no account: pass options.account");
  const signer = typeof account === "string" ? checkedAddress(account, "options.account") : account.address;
  if (!isAddressEqual(signer, user))
    throw new InvalidArgumentError("order.user", `order.user is ${user}, but the signer is ${signer}: only the user's signature opens it`);
  return signTypedData(walletClient, {
    account,
    domain: permit2Domain(order.originChainId),
    types: PERMIT2_ORDER_TYPES,
    primaryType: "PermitWitnessTransferFrom",
    message: permit2OrderMessage(order),
  });
}

/*//////////////////////////////////////////////////////////////
                            PRIVATE
//////////////////////////////////////////////////////////////*/

/**
 * The checks that need the chain, made before anything is sent: the clients' chain, the settler's tokens and
 * destination, the fill deadline (the default one returned), and the user's balance of the input.
 */
async function checkAgainstSettler(
  walletClient: WalletClient,
  publicClient: Client,
  originSettler: Address,
  user: Address,
  terms: OrderTerms,
  fillDeadline: number | undefined,
): Promise<number> {
  const read = <const Name extends "INPUT_TOKEN" | "OUTPUT_TOKEN" | "DESTINATION_CHAIN_ID" | "MAX_FILL_PERIOD">(functionName: Name) =>
    readContract(publicClient, { address: originSettler, abi: originSettlerAbi, functionName });
  const [walletChainId, chainId, inputToken, outputToken, destinationChainId, maxFillPeriod, latest] = await Promise.all([
    getChainId(walletClient),
    getChainId(publicClient),
    read("INPUT_TOKEN"),
    read("OUTPUT_TOKEN"),
    read("DESTINATION_CHAIN_ID"),
    read("MAX_FILL_PERIOD"),
    getBlock(publicClient, { blockTag: "latest" }),
  ]);
  if (walletChainId !== chainId)
    throw new InvalidArgumentError("publicClient", `The wallet is on chain ${walletChainId} and the public client on chain ${chainId}`);
  const isNativeInput = isAddressEqual(terms.inputToken, NATIVE_TOKEN);
  if (!isNativeInput && !isAddressEqual(terms.inputToken, inputToken))
    throw new InvalidArgumentError("terms.inputToken", `The settler takes ETH (${NATIVE_TOKEN}) or ${inputToken}, not ${terms.inputToken}`);
  if (!isAddressEqual(terms.outputToken, NATIVE_TOKEN) && !isAddressEqual(terms.outputToken, outputToken))
    throw new InvalidArgumentError(
      "terms.outputToken",
      `The settler pays ETH (${NATIVE_TOKEN}) or ${outputToken}, not ${terms.outputToken}`,
    );
  if (terms.destinationChainId !== destinationChainId)
    throw new InvalidArgumentError(
      "terms.destinationChainId",
      `The settler's orders are filled on chain ${destinationChainId}, not ${terms.destinationChainId}`,
    );
  // Read once the token is known to be the settler's: another address may not be a token at all.
  const balance = isNativeInput
    ? await getBalance(publicClient, { address: user })
    : await readContract(publicClient, { address: terms.inputToken, abi: erc20Abi, functionName: "balanceOf", args: [user] });
  if (balance < terms.inputAmount)
    throw new InvalidArgumentError(
      "terms.inputAmount",
      `${user} holds ${balance} of the input, less than terms.inputAmount ${terms.inputAmount}`,
    );

  const now = Number(latest.timestamp);
  const latestAllowed = now + Number(maxFillPeriod);
  if (fillDeadline === undefined) return now + Math.min(DEFAULT_FILL_PERIOD_SECONDS, Number(maxFillPeriod));
  if (fillDeadline <= now || fillDeadline > latestAllowed)
    throw new InvalidArgumentError(
      "options.fillDeadline",
      `options.fillDeadline must be after the latest block (time ${now}) and at most ${latestAllowed} (MAX_FILL_PERIOD ${maxFillPeriod} s), not ${fillDeadline}`,
    );
  return fillDeadline;
}

/** Approves the settler for exactly the input when its allowance is short; returns the approval's hash, if one was sent. */
async function approveIfShort(
  walletClient: WalletClient,
  publicClient: Client,
  account: Account | Address,
  originSettler: Address,
  terms: OrderTerms,
): Promise<Hex | undefined> {
  const owner = typeof account === "string" ? account : account.address;
  const allowance = await readContract(publicClient, {
    address: terms.inputToken,
    abi: erc20Abi,
    functionName: "allowance",
    args: [owner, originSettler],
  });
  if (allowance >= terms.inputAmount) return undefined;
  const hash = await writeContract(walletClient, {
    account,
    address: terms.inputToken,
    abi: erc20Abi,
    functionName: "approve",
    args: [originSettler, terms.inputAmount],
    chain: walletClient.chain ?? null,
  });
  const receipt = await waitForTransactionReceipt(publicClient, { hash });
  if (receipt.status !== "success") throw new TransactionRevertedError("approve", hash, receipt);
  return hash;
}

/** The terms' shape, which needs no chain: addresses, amounts above 0 that fit a uint256, a recipient. */
function checkedTerms(terms: OrderTerms, name: string): OrderTerms {
  if (typeof terms !== "object" || terms === null) throw new InvalidArgumentError(name, `${name} must be an object of order terms`);
  checkedAddress(terms.inputToken, `${name}.inputToken`);
  checkedAddress(terms.outputToken, `${name}.outputToken`);
  checkedAddress(terms.recipient, `${name}.recipient`, { nonZero: true });
  for (const field of ["inputAmount", "outputAmount"] as const) {
    checkedUint256(terms[field], `${name}.${field}`);
    if (terms[field] === 0n) throw new InvalidArgumentError(`${name}.${field}`, `${name}.${field} must be more than 0`);
  }
  checkedUint256(terms.destinationChainId, `${name}.destinationChainId`);
  return terms;
}

function checkedAddress(value: unknown, name: string, { nonZero = false } = {}): Address {
  if (typeof value !== "string" || !isAddress(value, { strict: false }))
    throw new InvalidArgumentError(name, `${name} must be an address, not ${String(value)}`);
  if (nonZero && isAddressEqual(value, NATIVE_TOKEN)) throw new InvalidArgumentError(name, `${name} must not be the zero address`);
  return value;
}

/** A bigint that fits a uint256: a number would lose precision above 2^53, so none is taken. */
function checkedUint256(value: unknown, name: string): bigint {
  if (typeof value !== "bigint" || value < 0n || value > UINT256_MAX)
    throw new InvalidArgumentError(name, `${name} must be a bigint from 0 to 2^256 - 1, not ${String(value)}`);
  return value;
}

function checkedUint32(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > UINT32_MAX)
    throw new InvalidArgumentError(name, `${name} must be a time in seconds, an integer from 1 to 2^32 - 1, not ${String(value)}`);
  return value;
}
