import { JsonRpcProvider } from "ethers";

import { contractAt } from "../common/artifacts.ts";
import type { VoucherClaims } from "../../typechain-types/index.ts";
import { ITEM_KINDS, type Catalogue } from "./catalogue.ts";
import type { ClaimsReader } from "./ledger.ts";

/** The claim contract as the credits service reads it: claimed vouchers, the chain's time, the issuer, the items. */
export class ClaimsChain implements ClaimsReader {
  readonly #provider: JsonRpcProvider;
  readonly #claims: VoucherClaims;

  constructor(rpcUrl: string, claimsContract: string) {
    this.#provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    this.#claims = contractAt<VoucherClaims>("VoucherClaims", claimsContract, this.#provider, "credits");
  }

  async chainId(): Promise<bigint> {
    return (await this.#provider.getNetwork()).chainId;
  }

  isClaimed(voucherId: string): Promise<boolean> {
    return this.#claims.isClaimed(voucherId);
  }

  async latestTimestamp(): Promise<number> {
    const block = await this.#provider.getBlock("latest");
    if (block === null) throw new Error("the L2 has no latest block");
    return block.timestamp;
  }

  issuer(): Promise<string> {
    return this.#claims.issuer();
  }

  /** The catalogue's items whose kind or asset differ from the claim contract's (vouchers for them would fail). */
  async mismatchedItems(catalogue: Catalogue): Promise<string[]> {
    const problems: string[] = [];
    for (const item of catalogue.items) {
      const [kind, asset] = await this.#claims.itemOf(item.id);
      const onChain = ITEM_KINDS[Number(kind)];
      if (onChain !== item.kind || asset.toLowerCase() !== item.asset.toLowerCase()) {
        problems.push(`item ${item.id} (${item.name}) is ${item.kind} of ${item.asset} in the catalogue but ${onChain} of ${asset} on the claim contract`);
      }
    }
    return problems;
  }

  destroy(): void {
    this.#provider.destroy();
  }
}
