import { Contract, JsonRpcProvider } from "ethers";
import { createPublicClient, http, type Address, type Hex, type PublicClient, type TypedDataDomain } from "viem";

import { contractAt } from "../common/artifacts.ts";
import type { VoucherClaims } from "../../typechain-types/index.ts";
import { ITEM_KINDS, type Catalogue, type CatalogueItem } from "./catalogue.ts";
import type { ClaimsReader } from "./voucher-book.ts";
import { REDEMPTION_TYPES, type CreditRedemption } from "@avn/protocol/credits/typed-data";

/** How long the claim platform's issuer and pause are taken as read before being read again. */
const STATUS_TTL_MS = 15_000;

const BALANCE_OF = ["function balanceOf(address owner) view returns (uint256)", "function PRIMARY_TOKEN() view returns (address)"];

/**
 * The claim contract and the L2 as the credits service reads them: claimed vouchers at a settlement
 * block, the issuer and the pause, the stock behind each item, the items' definitions, and redemption
 * signatures (of plain wallets and of contract wallets, ERC-1271).
 */
export class ClaimsChain implements ClaimsReader {
  readonly address: Address;
  readonly #provider: JsonRpcProvider;
  readonly #claims: VoucherClaims;
  readonly #viem: PublicClient;
  #status: { at: number; value: Promise<{ issuer: string; paused: boolean }> } | undefined;

  constructor(rpcUrl: string, claimsContract: string) {
    this.address = claimsContract as Address;
    this.#provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    this.#claims = contractAt<VoucherClaims>("VoucherClaims", claimsContract, this.#provider, "credits");
    this.#viem = createPublicClient({ transport: http(rpcUrl) });
  }

  async chainId(): Promise<bigint> {
    return (await this.#provider.getNetwork()).chainId;
  }

  /** The latest block: what an expiry refund is judged at, claims read at that very block. */
  async settlementPoint(): Promise<{ blockNumber: number; timestamp: number }> {
    const block = await this.#provider.getBlock("latest");
    if (block === null) throw new Error("the L2 has no latest block");
    return { blockNumber: block.number, timestamp: block.timestamp };
  }

  isClaimed(voucherId: string, blockNumber: number): Promise<boolean> {
    return this.#claims.isClaimed(voucherId, { blockTag: blockNumber });
  }

  /** The issuer key and the pause the contract has now (read again every 15 s). */
  status(): Promise<{ issuer: string; paused: boolean }> {
    const now = Date.now();
    if (this.#status === undefined || now - this.#status.at >= STATUS_TTL_MS) {
      const value = Promise.all([this.#claims.issuer(), this.#claims.paused()]).then(([issuer, paused]) => ({ issuer, paused }));
      this.#status = { at: now, value };
      value.catch(() => (this.#status = undefined));
    }
    return this.#status.value;
  }

  /**
   * What the contract holds for `item`'s kind of delivery, and the pool it draws from (the token whose
   * balance it spends: staked tokens are made from primary tokens); undefined for minted items.
   */
  async stock(item: CatalogueItem): Promise<{ pool: string; available: bigint } | undefined> {
    if (item.kind === "Mint") return undefined;
    let token = item.asset;
    if (item.kind === "StakeFor")
      token = (await new Contract(item.asset, BALANCE_OF, this.#provider).getFunction("PRIMARY_TOKEN")()) as string;
    const available = (await new Contract(token, BALANCE_OF, this.#provider).getFunction("balanceOf")(this.address)) as bigint;
    return { pool: token.toLowerCase(), available };
  }

  /** Whether `account` signed `redemption` (an ordinary wallet's signature, or a contract wallet's by ERC-1271). */
  verifyRedemption(domain: TypedDataDomain, redemption: CreditRedemption, signature: Hex): Promise<boolean> {
    // "eoa" first: a plain wallet's signature is recovered locally, with no RPC call; others go on-chain.
    return this.#viem.verifyTypedData({
      address: redemption.account,
      domain,
      types: REDEMPTION_TYPES,
      primaryType: "CreditRedemption",
      message: { ...redemption },
      signature,
      mode: "eoa",
    });
  }

  /** The catalogue's items whose kind or asset differ from the claim contract's (vouchers for them would fail). */
  async mismatchedItems(catalogue: Catalogue): Promise<string[]> {
    const problems: string[] = [];
    for (const item of catalogue.items) {
      const [kind, asset] = await this.#claims.itemOf(item.id);
      const onChain = ITEM_KINDS[Number(kind)];
      if (onChain !== item.kind || asset.toLowerCase() !== item.asset.toLowerCase()) {
        problems.push(
          `item ${item.id} (${item.name}) is ${item.kind} of ${item.asset} in the catalogue but ${onChain} of ${asset} on the claim contract`,
        );
      }
    }
    return problems;
  }

  destroy(): void {
    this.#provider.destroy();
  }
}
