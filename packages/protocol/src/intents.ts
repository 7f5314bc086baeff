// The intent layer's order format (docs/intents.md), defined once for the solver, the SDK, the bridge CLI, the
// web app and the tests (viem only, so the browser bundle imports it as it is). `test/ts/contracts/Intents.ts`
// checks each definition against the contracts: the order data type, the order id, the fill record's slot, and
// the Permit2 digest a wallet signs for `openFor`.
import { decodeAbiParameters, encodeAbiParameters, keccak256, toHex, type Address, type Hex, type TypedDataDomain } from "viem";

/** `OrderData`'s EIP-712 type string; `ORDER_DATA_TYPE` (the `orderDataType` of every order) is its keccak256. */
export const ORDER_DATA_TYPE_STRING =
  "OrderData(address inputToken,uint256 inputAmount,address outputToken,uint256 outputAmount,address recipient,uint256 destinationChainId)";
export const ORDER_DATA_TYPE: Hex = keccak256(toHex(ORDER_DATA_TYPE_STRING));

/** Native ETH as a token address, in order data and in ERC-7683 outputs. */
export const NATIVE_TOKEN: Address = "0x0000000000000000000000000000000000000000";

/** Permit2, at the same address on Ethereum and as an OP-stack preinstall. */
export const PERMIT2_ADDRESS: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3";

/** `IIntentOriginSettler.OrderStatus` as `orderStatus(id)` returns it. */
export const OrderStatus = { unknown: 0, open: 1, settled: 2, refunded: 3 } as const;
export type OrderStatusName = keyof typeof OrderStatus;

/** `DestinationSettler.FILLS_SLOT`. */
export const FILLS_SLOT = 0n;

/** The terms a user asks for: `orderData` is their ABI encoding. */
export interface OrderTerms {
  inputToken: Address;
  inputAmount: bigint;
  outputToken: Address;
  outputAmount: bigint;
  recipient: Address;
  destinationChainId: bigint;
}

/** Everything an order is (`FillInstruction.originData` is its ABI encoding; the order id is that encoding's hash). */
export interface OriginData extends OrderTerms {
  originChainId: bigint;
  originSettler: Address;
  user: Address;
  nonce: bigint;
  gasless: boolean;
  fillDeadline: number;
  destinationSettler: Address;
}

const ORDER_DATA_ABI = [
  {
    type: "tuple",
    components: [
      { name: "inputToken", type: "address" },
      { name: "inputAmount", type: "uint256" },
      { name: "outputToken", type: "address" },
      { name: "outputAmount", type: "uint256" },
      { name: "recipient", type: "address" },
      { name: "destinationChainId", type: "uint256" },
    ],
  },
] as const;

// `OriginData`: who, where and when, around the six `OrderData` fields in their order (the struct of IIntentSettlers.sol).
const ORIGIN_DATA_ABI = [
  {
    type: "tuple",
    components: [
      { name: "originChainId", type: "uint256" },
      { name: "originSettler", type: "address" },
      { name: "user", type: "address" },
      { name: "nonce", type: "uint256" },
      { name: "gasless", type: "bool" },
      { name: "fillDeadline", type: "uint32" },
      ...ORDER_DATA_ABI[0].components,
      { name: "destinationSettler", type: "address" },
    ],
  },
] as const;

export function encodeOrderData(terms: OrderTerms): Hex {
  return encodeAbiParameters(ORDER_DATA_ABI, [terms]);
}

export function decodeOrderData(orderData: Hex): OrderTerms {
  const [terms] = decodeAbiParameters(ORDER_DATA_ABI, orderData);
  return { ...terms };
}

export function encodeOriginData(order: OriginData): Hex {
  return encodeAbiParameters(ORIGIN_DATA_ABI, [order]);
}

export function decodeOriginData(originData: Hex): OriginData {
  const [order] = decodeAbiParameters(ORIGIN_DATA_ABI, originData);
  return { ...order };
}

/** The order id: keccak256 of its origin data. */
export function orderIdOf(originData: Hex): Hex {
  return keccak256(originData);
}

/** The storage slot of order `orderId`'s fill record in the destination settler. */
export function fillSlotOf(orderId: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [orderId, FILLS_SLOT]));
}

/** A fill record's word (`DestinationSettler.fills`), read back: who is repaid and when the fill was made. */
export function decodeFillRecord(word: bigint): { repayTo: Address; filledAt: bigint } | undefined {
  if (word === 0n) return undefined;
  const repayTo = toHex(word & ((1n << 160n) - 1n), { size: 20 });
  return { repayTo, filledAt: word >> 160n };
}

/** The gasless order a user signs for `openFor`, with its order data as the nested struct a wallet shows. */
export interface GaslessOrder {
  originSettler: Address;
  user: Address;
  nonce: bigint;
  originChainId: bigint;
  openDeadline: number;
  fillDeadline: number;
  orderData: OrderTerms;
}

/** Permit2's EIP-712 domain on one chain (no version). */
export function permit2Domain(chainId: number | bigint): TypedDataDomain {
  return { name: "Permit2", chainId: Number(chainId), verifyingContract: PERMIT2_ADDRESS };
}

/** The typed data of `permitWitnessTransferFrom` whose witness is the gasless order (`OriginSettler.PERMIT2_WITNESS_TYPE_STRING`). */
export const PERMIT2_ORDER_TYPES = {
  PermitWitnessTransferFrom: [
    { name: "permitted", type: "TokenPermissions" },
    { name: "spender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
    { name: "witness", type: "GaslessCrossChainOrder" },
  ],
  TokenPermissions: [
    { name: "token", type: "address" },
    { name: "amount", type: "uint256" },
  ],
  GaslessCrossChainOrder: [
    { name: "originSettler", type: "address" },
    { name: "user", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "originChainId", type: "uint256" },
    { name: "openDeadline", type: "uint32" },
    { name: "fillDeadline", type: "uint32" },
    { name: "orderDataType", type: "bytes32" },
    { name: "orderData", type: "OrderData" },
  ],
  OrderData: ORDER_DATA_ABI[0].components,
} as const;

/** What a wallet signs for `openFor(order)`: Permit2 moves the input to the origin settler, the order its witness. */
export function permit2OrderMessage(order: GaslessOrder) {
  return {
    permitted: { token: order.orderData.inputToken, amount: order.orderData.inputAmount },
    spender: order.originSettler,
    nonce: order.nonce,
    deadline: BigInt(order.openDeadline),
    witness: {
      originSettler: order.originSettler,
      user: order.user,
      nonce: order.nonce,
      originChainId: order.originChainId,
      openDeadline: order.openDeadline,
      fillDeadline: order.fillDeadline,
      orderDataType: ORDER_DATA_TYPE,
      orderData: order.orderData,
    },
  };
}

/** The `GaslessCrossChainOrder` struct `openFor` and `resolveFor` take. */
export function gaslessOrderStruct(order: GaslessOrder) {
  return {
    originSettler: order.originSettler,
    user: order.user,
    nonce: order.nonce,
    originChainId: order.originChainId,
    openDeadline: order.openDeadline,
    fillDeadline: order.fillDeadline,
    orderDataType: ORDER_DATA_TYPE,
    orderData: encodeOrderData(order.orderData),
  };
}
