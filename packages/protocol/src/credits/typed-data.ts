// The credits channel's two signed messages, defined once for the credits service, the tests and the web
// app (viem only, so the browser bundle imports it as it is):
// - `Voucher`: what the issuer key signs and `VoucherClaims` verifies (the Solidity struct of
//   `IVoucherClaims`; a test compares the digests of both);
// - `CreditRedemption`: what a claim account's wallet signs to spend its credits, so that knowing an
//   account's address is not enough to spend from it.
import type { Address, Hex, TypedDataDomain } from "viem";

/** The EIP-712 domain of `VoucherClaims` (and of redemption requests addressed to it) on one chain. */
export function creditsDomain(chainId: number | bigint, claimsContract: Address): TypedDataDomain {
  return { name: "Verification Network Credits", version: "1", chainId: Number(chainId), verifyingContract: claimsContract };
}

export const VOUCHER_TYPES = {
  Voucher: [
    { name: "recipient", type: "address" },
    { name: "itemId", type: "uint256" },
    { name: "amount", type: "uint256" },
    { name: "voucherId", type: "bytes32" },
    { name: "expiry", type: "uint64" },
  ],
} as const;

export interface Voucher {
  recipient: Address;
  itemId: bigint;
  amount: bigint;
  voucherId: Hex;
  expiry: bigint;
}

export const REDEMPTION_TYPES = {
  CreditRedemption: [
    { name: "account", type: "address" },
    { name: "itemId", type: "uint256" },
    { name: "quantity", type: "uint256" },
    { name: "maxPrice", type: "uint256" },
    { name: "recipient", type: "address" },
    { name: "requestId", type: "bytes32" },
    { name: "issuedAt", type: "uint64" },
  ],
} as const;

/** A claim account's request to spend credits on `quantity` units of an item, delivered to `recipient`. */
export interface CreditRedemption {
  account: Address;
  itemId: bigint;
  quantity: bigint;
  /** The most credits the account agrees to spend on it (the price it was shown): a price raised since is refused, not charged. */
  maxPrice: bigint;
  recipient: Address;
  /** Chosen by the client: the same request sent twice is one redemption. */
  requestId: Hex;
  /** Seconds; the service refuses a request much older or newer than its clock. */
  issuedAt: bigint;
}

/** A voucher as JSON carries it (integers as decimal strings). */
export interface VoucherJson {
  recipient: string;
  itemId: string;
  amount: string;
  voucherId: string;
  expiry: string;
}

export function voucherToJson(voucher: Voucher): VoucherJson {
  return {
    recipient: voucher.recipient,
    itemId: voucher.itemId.toString(),
    amount: voucher.amount.toString(),
    voucherId: voucher.voucherId,
    expiry: voucher.expiry.toString(),
  };
}

export function voucherFromJson(json: VoucherJson): Voucher {
  return {
    recipient: json.recipient as Address,
    itemId: BigInt(json.itemId),
    amount: BigInt(json.amount),
    voucherId: json.voucherId as Hex,
    expiry: BigInt(json.expiry),
  };
}
