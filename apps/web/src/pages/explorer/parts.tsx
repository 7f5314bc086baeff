import type { ReactNode } from "react";
import { isAddress, isHash, type Transaction } from "viem";

import { HexLink } from "../../components/ExplorerLink";
import { contractAt, type ChainKey } from "../../explorer/abis";
import { valueText, type Decoded } from "../../explorer/decode";
import { describeError } from "../../lib/errors";
import { useExplorer } from "./useExplorer";

/** An address linking to its page, with the known contract's name beside it. */
export function Addr({ chain, address, full = false }: { chain: ChainKey; address: string | null | undefined; full?: boolean }) {
  const { known } = useExplorer();
  if (address === null || address === undefined) return <span>—</span>;
  const named = contractAt(known, chain, address);
  return (
    <span className="addr">
      <HexLink chain={chain} kind="address" value={address} full={full} />
      {named !== undefined && <span className="contract-name"> {named.name}</span>}
    </span>
  );
}

/** A decoded value: addresses link to their page; lists and structs spelled out. */
export function Value({ chain, value }: { chain: ChainKey; value: unknown }) {
  if (typeof value === "string" && isAddress(value, { strict: false })) return <Addr chain={chain} address={value} />;
  if (typeof value === "string" && isHash(value)) return <code>{value}</code>;
  return <code>{valueText(value)}</code>;
}

/** A call's, event's or error's name and its arguments, one per line. */
export function DecodedView({ chain, decoded }: { chain: ChainKey; decoded: Decoded }) {
  return (
    <div className="decoded">
      <p>
        <strong>{decoded.name}</strong> <code className="hint">{decoded.signature}</code>
      </p>
      {decoded.args.length > 0 && (
        <dl className="facts">
          {decoded.args.map((arg) => (
            <Fact key={arg.name} term={`${arg.name} (${arg.type})`}>
              <Value chain={chain} value={arg.value} />
            </Fact>
          ))}
        </dl>
      )}
    </div>
  );
}

/** One term and its description in a facts list. */
export function Fact({ term, children, testId }: { term: ReactNode; children: ReactNode; testId?: string }) {
  return (
    <>
      <dt>{term}</dt>
      <dd data-testid={testId}>{children}</dd>
    </>
  );
}

/** A read's loading and error states, in the page's words; the content once loaded. */
export function Loaded<T>({
  query,
  what,
  children,
}: {
  query: { data?: T; error: Error | null; isPending: boolean };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.data !== undefined) return <>{children(query.data)}</>;
  if (query.error !== null)
    return (
      <p className="error" role="alert">
        Could not read {what}: {describeError(query.error)}
      </p>
    );
  return <p role="status">Loading {what}…</p>;
}

/** An OP deposit transaction (type 0x7e), which viem's L2 formatter types as "deposit". */
export function isDeposit(tx: Transaction): boolean {
  return (tx.type as string) === "deposit";
}
