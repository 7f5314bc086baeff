import { randomBytes } from "node:crypto";

import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Address, Hex } from "viem";

import { creditsDomain, VOUCHER_TYPES, type Voucher } from "@avn/protocol/credits/typed-data";

/** The issuer key: signs vouchers for one claim contract on one chain. */
export class VoucherIssuer {
  readonly #account: PrivateKeyAccount;
  readonly #domain;

  constructor(privateKey: Hex, chainId: bigint, claimsContract: Address) {
    this.#account = privateKeyToAccount(privateKey);
    this.#domain = creditsDomain(chainId, claimsContract);
  }

  get address(): Address {
    return this.#account.address;
  }

  /** A voucher for `recipient` (a fresh random id, expiring at `expiry`) and its signature. */
  async issue(input: {
    recipient: Address;
    itemId: bigint;
    amount: bigint;
    expiry: bigint;
  }): Promise<{ voucher: Voucher; signature: Hex }> {
    const voucher: Voucher = { ...input, voucherId: `0x${randomBytes(32).toString("hex")}` };
    const signature = await this.#account.signTypedData({
      domain: this.#domain,
      types: VOUCHER_TYPES,
      primaryType: "Voucher",
      message: voucher,
    });
    return { voucher, signature };
  }
}
