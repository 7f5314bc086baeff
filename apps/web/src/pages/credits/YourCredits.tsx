import { DataTable, type Column } from "../../components/DataTable";
import { describeError } from "../../lib/errors";
import type { CreditAccount, Movement } from "./credits-api";
import { formatCreditChange, formatCredits } from "./delivery";
import { ACCOUNT_REFRESH_MS } from "./useCredits";

/** What each kind of movement means to the buyer. */
const MOVEMENT_WORDS: Record<string, string> = {
  purchase: "Purchase",
  refund: "Refund of a payment: credits taken back",
  dispute: "Payment disputed: credits taken back",
  dispute_won: "Dispute won: credits given back",
  redemption: "Redeemed for a voucher",
  voucher_expired: "Voucher expired unclaimed: credits given back",
};

interface YourCreditsProps {
  wallet: string | undefined;
  account: CreditAccount | undefined;
  error: Error | null;
}

/** The wallet's balance, what it owes and why, and every movement, newest first. */
export function YourCredits({ wallet, account, error }: YourCreditsProps) {
  let body;
  if (wallet === undefined) return null;
  if (account === undefined)
    body =
      error === null ? (
        <p role="status">Loading your credits…</p>
      ) : (
        <p className="error">Could not read your credits: {describeError(error)}</p>
      );
  else
    body = (
      <>
        <dl className="facts">
          <dt>Balance</dt>
          <dd className="stat" data-testid="credit-balance">
            {formatCredits(account.balance)}
          </dd>
        </dl>
        {account.owed > 0 && (
          <p className="warning" data-testid="credit-owed">
            You owe {formatCredits(account.owed)}. A refund or a dispute of one of your payments took back credits you had already spent;
            your next purchase pays this first, and you cannot redeem until it is paid.
          </p>
        )}
        {error !== null && <p className="error">The last refresh failed ({describeError(error)}): these figures may be out of date.</p>}
        <Movements movements={account.movements} />
      </>
    );
  return (
    <section className="panel" aria-labelledby="your-credits-heading">
      <h2 id="your-credits-heading">Your credits</h2>
      {body}
    </section>
  );
}

const MOVEMENT_COLUMNS: ReadonlyArray<Column<Movement>> = [
  {
    header: "When",
    cell: (movement) => new Date(movement.createdAt).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" }),
  },
  { header: "What", cell: (movement) => MOVEMENT_WORDS[movement.kind] ?? movement.kind },
  { header: "Credits", cell: (movement) => formatCreditChange(movement.amount), cellProps: () => ({ "data-testid": "movement-amount" }) },
  { header: "Reference", cell: (movement) => <code title={movement.reference}>{shortReference(movement.reference)}</code> },
];

function Movements({ movements }: { movements: Movement[] }) {
  if (movements.length === 0) return <p data-testid="no-movements">No movements yet: buy credits to start.</p>;
  // The service lists them oldest first. Movements may share a time and a reference: their place in that
  // list (which new movements do not change) tells them apart.
  const newestFirst = movements
    .map((movement, index) => ({ ...movement, key: `${movement.createdAt}-${movement.reference}-${index}` }))
    .reverse();
  return (
    <DataTable
      caption={`Movements, newest first (refreshed every ${ACCOUNT_REFRESH_MS / 1000} s)`}
      columns={MOVEMENT_COLUMNS}
      rows={newestFirst}
      rowKey={(movement) => movement.key}
      rowProps={(movement) => ({ "data-testid": "movement", "data-kind": movement.kind })}
    />
  );
}

/** A payment id or a voucher id, short enough for a table cell (its whole value is its title). */
function shortReference(reference: string): string {
  return reference.length > 20 ? `${reference.slice(0, 10)}…${reference.slice(-6)}` : reference;
}
