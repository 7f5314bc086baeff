import { formatAmount } from "../../lib/format";

interface Tier {
  upToSupply: bigint;
  price: bigint;
}

/**
 * The tier table: each tier's range of license numbers (1-based sale order) and price, with the tier the
 * next license falls in marked in words. Tiers reaching past the maximum supply are cut at it.
 */
export function PriceTiers({ tiers, totalMinted, maxSupply }: { tiers: readonly Tier[]; totalMinted: bigint; maxSupply: bigint }) {
  const next = totalMinted + 1n;
  const rows = tiers
    .map((tier, index) => ({ ...tier, index, first: index === 0 ? 1n : tiers[index - 1].upToSupply + 1n }))
    .filter((tier) => tier.first <= maxSupply);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table>
        <caption>Price tiers</caption>
        <thead>
          <tr>
            <th scope="col">Tier</th>
            <th scope="col">License numbers</th>
            <th scope="col">Price per license</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((tier) => {
            const last = tier.upToSupply < maxSupply ? tier.upToSupply : maxSupply;
            const current = next >= tier.first && next <= last;
            const status = current ? "Current tier" : last < next ? "Sold out" : "Upcoming";
            return (
              <tr key={tier.index} aria-current={current ? "true" : undefined}>
                <th scope="row">{tier.index + 1}</th>
                <td>
                  {tier.first.toString()} – {last.toString()}
                </td>
                <td>{formatAmount(tier.price)} primary tokens</td>
                <td>{current ? <strong>{status}</strong> : status}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
