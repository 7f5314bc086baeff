import { getAddress, isAddress, ZeroAddress } from "ethers";
import type { Address, Hex, TypedDataDomain } from "viem";
import { z } from "zod";

import { CreditsError } from "./errors.ts";
import { creditsDomain, type CreditRedemption } from "@avn/protocol/credits/typed-data";

/** Checks that `redemption.account` signed it: an ordinary wallet, or a contract wallet (ERC-1271). */
export type RedemptionVerifier = (domain: TypedDataDomain, redemption: CreditRedemption, signature: Hex) => Promise<boolean>;

const address = z.string().refine((value) => isAddress(value), "not an EVM address");
const uint = z.string().regex(/^\d{1,30}$/, "a whole number as a decimal string");

/** The body of `POST /credits/redemptions`: the request as the wallet signed it (integers as decimal strings), and the signature. */
export const redemptionBody = z
  .object({
    redemption: z
      .object({
        account: address,
        itemId: uint,
        quantity: uint,
        maxPrice: uint,
        recipient: address,
        requestId: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "32 bytes of hex"),
        issuedAt: uint,
      })
      .strict(),
    // 65 bytes from a plain wallet; a contract wallet's (ERC-1271) may be longer.
    signature: z.string().regex(/^0x(?:[0-9a-fA-F]{2}){65,2048}$/, "a signature in hex"),
  })
  .strict();

/**
 * The redemption the claim account's wallet signed, once its signature and time are checked: knowing an
 * account's address is not enough to spend its credits.
 */
export async function verifiedRedemption(
  body: z.infer<typeof redemptionBody>,
  context: { chainId: bigint; claimsContract: Address; nowSeconds: number; maxSkewSeconds: number; verify: RedemptionVerifier },
): Promise<CreditRedemption> {
  const redemption: CreditRedemption = {
    account: getAddress(body.redemption.account) as Address,
    itemId: BigInt(body.redemption.itemId),
    quantity: BigInt(body.redemption.quantity),
    maxPrice: BigInt(body.redemption.maxPrice),
    recipient: getAddress(body.redemption.recipient) as Address,
    requestId: body.redemption.requestId.toLowerCase() as Hex,
    issuedAt: BigInt(body.redemption.issuedAt),
  };
  if (redemption.recipient === ZeroAddress) throw new CreditsError(400, "A voucher's recipient cannot be the zero address");
  if (Math.abs(Number(redemption.issuedAt) - context.nowSeconds) > context.maxSkewSeconds) {
    throw new CreditsError(
      400,
      `The request was signed for ${new Date(Number(redemption.issuedAt) * 1000).toISOString()}: sign it again (the clocks may differ by ${context.maxSkewSeconds} s)`,
    );
  }
  let valid: boolean;
  try {
    valid = await context.verify(creditsDomain(context.chainId, context.claimsContract), redemption, body.signature as Hex);
  } catch {
    valid = false; // a malformed signature proves nothing
  }
  if (!valid) throw new CreditsError(401, "The request was not signed by the claim account's wallet");
  return redemption;
}
