import type { NetworkConfig } from "@avn/protocol/network-config";
import { formatAmount } from "../../lib/format";
import type { ItemKind } from "./credits-api";

/** A number of credits as text ("2,500 credits", "1 credit"). */
export function formatCredits(credits: number): string {
  return `${credits.toLocaleString("en-US")} credit${credits === 1 ? "" : "s"}`;
}

/** A signed change of credits, as a movement shows it ("+2,500", "−1,000"). */
export function formatCreditChange(amount: number): string {
  return `${amount < 0 ? "−" : "+"}${Math.abs(amount).toLocaleString("en-US")}`;
}

/**
 * `credits` credits as money ("$25.00"): credits → minor units (`creditsPerMinorUnit` a cent, say) →
 * the currency's major unit, with as many decimals as the currency has.
 */
export function formatPrice(credits: number, currency: string, creditsPerMinorUnit: number): string {
  const format = new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() });
  const decimals = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(credits / creditsPerMinorUnit / 10 ** decimals);
}

const plural = (count: bigint, one: string, many: string) => `${count.toLocaleString("en-US")} ${count === 1n ? one : many}`;

/**
 * What `amount` of an item delivers, in words: token items in whole tokens (18 decimals, as the protocol's
 * tokens have), licenses and minted items as counts. The protocol's own contracts are named; any other
 * asset is named by its address.
 */
export function describeDelivery(item: { kind: ItemKind; asset: string }, amount: bigint, contracts: NetworkConfig["contracts"]): string {
  const is = (address: string | undefined) => address !== undefined && address.toLowerCase() === item.asset.toLowerCase();
  switch (item.kind) {
    case "Transfer":
      return `${formatAmount(amount)} ${is(contracts.l2.PrimaryToken) ? "primary tokens" : `tokens of ${item.asset}`}`;
    case "StakeFor":
      return `${formatAmount(amount)} staked tokens`;
    case "NftInventory":
      return is(contracts.l2.NodeLicense)
        ? plural(amount, "node license", "node licenses")
        : `${plural(amount, "token", "tokens")} of ${item.asset}`;
    case "Mint":
      return plural(amount, "minted item", "minted items");
  }
}
