import { Link } from "react-router";

import { shortAddress } from "../lib/format";

/** The chain a link is about: the explorer's routes name it `l1` or `l2`. */
export type ExplorerChain = "l1" | "l2";

/** The explorer's routes, pinned: the other pages and the node logs link to them. */
export const explorerPaths = {
  home: "/explorer",
  block: (chain: ExplorerChain, number: bigint | number) => `/explorer/${chain}/block/${number.toString()}`,
  tx: (chain: ExplorerChain, hash: string) => `/explorer/${chain}/tx/${hash}`,
  address: (chain: ExplorerChain, address: string) => `/explorer/${chain}/address/${address}`,
  job: (id: bigint | number) => `/explorer/job/${id.toString()}`,
  attestations: "/explorer/attestations",
};

/**
 * An address or transaction hash, shortened for narrow screens (the full value in the title, for copying
 * and for screen readers' description), linking to its explorer page. Kept tiny: every page imports it,
 * while the explorer itself is its own lazy chunk.
 */
export function HexLink({
  chain,
  kind,
  value,
  full = false,
}: {
  chain: ExplorerChain;
  kind: "address" | "tx";
  value: string;
  full?: boolean;
}) {
  return (
    <Link to={explorerPaths[kind](chain, value)} title={value} className="hex-link">
      <code>{full ? value : shortAddress(value)}</code>
    </Link>
  );
}

/** A verification job's number (`#12`), linking to its explorer page. */
export function JobLink({ id }: { id: bigint | number }) {
  return <Link to={explorerPaths.job(id)}>#{id.toString()}</Link>;
}
