import { DataTable, type Column } from "../../components/DataTable";
import { formatAmount } from "../../lib/format";

interface Tier {
  upToSupply: bigint;
  price: bigint;
}

interface TierRow extends Tier {
  index: number;
  /** The first and last license numbers it sells (the last cut at the maximum supply). */
  first: bigint;
  last: bigint;
  /** The next license sold falls in it. */
  current: boolean;
  status: string;
}

const TIER_COLUMNS: ReadonlyArray<Column<TierRow>> = [
  { header: "Tier", rowHeader: true, cell: (tier) => tier.index + 1 },
  { header: "License numbers", cell: (tier) => `${tier.first.toString()} – ${tier.last.toString()}` },
  { header: "Price per license", cell: (tier) => `${formatAmount(tier.price)} primary tokens` },
  { header: "Status", cell: (tier) => (tier.current ? <strong>{tier.status}</strong> : tier.status) },
];

/**
 * The tier table: each tier's range of license numbers (1-based sale order) and price, with the tier the
 * next license falls in marked in words. Tiers reaching past the maximum supply are cut at it.
 */
export function PriceTiers({ tiers, totalMinted, maxSupply }: { tiers: readonly Tier[]; totalMinted: bigint; maxSupply: bigint }) {
  const next = totalMinted + 1n;
  const tierRows = tiers
    .map((tier, index) => ({ ...tier, index, first: index === 0 ? 1n : tiers[index - 1].upToSupply + 1n }))
    .filter((tier) => tier.first <= maxSupply)
    .map((tier) => {
      const last = tier.upToSupply < maxSupply ? tier.upToSupply : maxSupply;
      const current = next >= tier.first && next <= last;
      return { ...tier, last, current, status: current ? "Current tier" : last < next ? "Sold out" : "Upcoming" };
    });
  return (
    <DataTable
      caption="Price tiers"
      columns={TIER_COLUMNS}
      rows={tierRows}
      rowKey={(tier) => String(tier.index)}
      rowProps={(tier) => ({ "aria-current": tier.current ? "true" : undefined })}
    />
  );
}
