import { Link } from "react-router";

import { shortAddress } from "../lib/format";
import { CopyButton } from "./CopyButton";

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
 * An address or transaction hash linking to its explorer page, with a button that copies it. Shown as
 * `0x1234…abcd` on one line, the full value in the link's title (shown on hover, read as its description).
 * The link's name is what it shows (no `aria-label`: WCAG 2.5.3, the visible text part of the name). `full`
 * writes every digit, for a value the reader should check (the contract a transaction goes to): it wraps
 * where it must in text, and in a table shows shortened all the same, the middle digits hidden from the eye
 * only (screen readers read them, a text selection copies them). Kept tiny: every page imports it, while the
 * explorer itself is its own lazy chunk.
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
    <span className={full ? "hex hex-full" : "hex"}>
      <Link to={explorerPaths[kind](chain, value)} title={value} className="hex-link">
        <code>
          {full ? (
            <>
              {value.slice(0, 6)}
              <span className="hex-middle">{value.slice(6, -4)}</span>
              <span className="hex-tail">{value.slice(-4)}</span>
            </>
          ) : (
            shortAddress(value)
          )}
        </code>
      </Link>
      <CopyButton value={value} label={kind === "tx" ? "Copy hash" : "Copy address"} />
    </span>
  );
}

/** A verification job's number (`#12`), linking to its explorer page. */
export function JobLink({ id }: { id: bigint | number }) {
  return <Link to={explorerPaths.job(id)}>#{id.toString()}</Link>;
}
