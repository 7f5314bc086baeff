import { useState } from "react";
import type { Address } from "viem";
import { useBlock, useConfig } from "wagmi";

import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { TxButton } from "../../components/TxButton";
import { voucherFromJson } from "@avn/protocol/credits/typed-data";
import { formatDuration, formatTime } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";
import { claimCallAbi } from "./claim-abi";
import type { Catalogue, CreditAccount, VoucherView } from "./credits-api";
import { describeDelivery, formatCredits } from "./delivery";
import type { CreditsSettings } from "./settings";

interface VouchersProps {
  settings: CreditsSettings;
  catalogue: Catalogue | undefined;
  wallet: Address | undefined;
  account: CreditAccount | undefined;
}

/**
 * The wallet's vouchers, newest first: what each delivers, until when it may be claimed (by the L2's clock,
 * which the claim contract goes by), its state, and Claim for those the wallet may claim. The service marks
 * a voucher claimed once the chain says so, so the list follows the claim by itself.
 */
export function Vouchers({ settings, catalogue, wallet, account }: VouchersProps) {
  // Said after a claim is mined: the row's button leaves once the service sees the claim.
  const [done, setDone] = useState("");
  let body;
  if (wallet === undefined) return null;
  if (account === undefined) body = <p role="status">Loading your vouchers…</p>;
  else if (account.vouchers.length === 0) body = <p data-testid="no-vouchers">No vouchers yet: redeem an item of the catalogue.</p>;
  else
    body = (
      <VoucherTable
        settings={settings}
        catalogue={catalogue}
        wallet={wallet}
        vouchers={[...account.vouchers].reverse()}
        onClaimed={setDone}
      />
    );
  return (
    <section aria-labelledby="vouchers-heading">
      <h2 id="vouchers-heading">Your vouchers</h2>
      <p className="success" role="status" data-testid="claim-done">
        {done}
      </p>
      {body}
    </section>
  );
}

interface VoucherTableProps {
  settings: CreditsSettings;
  catalogue: Catalogue | undefined;
  wallet: Address;
  vouchers: VoucherView[];
  onClaimed: (message: string) => void;
}

function VoucherTable({ settings, catalogue, wallet, vouchers, onClaimed }: VoucherTableProps) {
  const { config } = useAppSettings();
  const l2Block = useBlock({ chainId: settings.chainId, watch: true });
  const l2Now = l2Block.data?.timestamp;
  const itemOf = (view: VoucherView) => catalogue?.items.find((entry) => String(entry.id) === view.voucher.itemId);
  const delivers = (view: VoucherView) => {
    const item = itemOf(view);
    return item === undefined
      ? `${view.voucher.amount} (item ${view.voucher.itemId})`
      : describeDelivery(item, BigInt(view.voucher.amount), config.contracts);
  };
  const columns: Array<Column<VoucherView>> = [
    { header: "Item", rowHeader: true, cell: (view) => `${view.quantity} × ${itemOf(view)?.name ?? `item ${view.voucher.itemId}`}` },
    { header: "Delivers", cell: delivers },
    { header: "Paid", cell: (view) => formatCredits(view.price) },
    {
      header: "Claim by (L2 time)",
      cell: (view) => {
        const expiry = BigInt(view.voucher.expiry);
        return (
          <>
            {formatTime(expiry)}
            {view.status === "issued" && l2Now !== undefined && expiry >= l2Now && (
              <span className="hint"> (in {formatDuration(expiry - l2Now)})</span>
            )}
          </>
        );
      },
    },
    { header: "Status", cell: statusWords, cellProps: () => ({ "data-testid": "voucher-status" }) },
    {
      header: "Action",
      cell: (view) => (
        <VoucherAction
          settings={settings}
          view={view}
          wallet={wallet}
          l2Now={l2Now}
          onClaimed={() => onClaimed(`Voucher claimed: ${delivers(view)} delivered to your wallet.`)}
        />
      ),
    },
  ];
  return (
    <DataTable
      caption="Your vouchers, newest first"
      columns={columns}
      rows={vouchers}
      rowKey={(view) => view.voucher.voucherId}
      rowProps={(view) => ({ "data-testid": "voucher", "data-voucher-id": view.voucher.voucherId, "data-item-id": view.voucher.itemId })}
    />
  );
}

function statusWords(view: VoucherView): string {
  switch (view.status) {
    case "issued":
      return "Issued, not yet claimed";
    case "claimed":
      return "Claimed";
    case "expired":
      return `Expired unclaimed: its ${formatCredits(view.price)} came back to your balance`;
  }
}

interface VoucherActionProps {
  settings: CreditsSettings;
  view: VoucherView;
  wallet: Address;
  l2Now: bigint | undefined;
  onClaimed: () => void;
}

/** Claim for a voucher the wallet may claim now, or why there is nothing to do. */
function VoucherAction({ settings, view, wallet, l2Now, onClaimed }: VoucherActionProps) {
  const wagmiConfig = useConfig();
  if (view.status !== "issued") return null;
  if (view.voucher.recipient.toLowerCase() !== wallet.toLowerCase()) {
    return (
      <span className="hint">
        Only <HexLink chain="l2" kind="address" value={view.voucher.recipient} />, its recipient, can claim it.
      </span>
    );
  }
  if (view.claimsContract.toLowerCase() !== settings.claimsContract.toLowerCase()) {
    return (
      <span className="hint">
        It is for another claim contract (<HexLink chain="l2" kind="address" value={view.claimsContract} />) than this deployment&apos;s.
      </span>
    );
  }
  if (l2Now !== undefined && l2Now > BigInt(view.voucher.expiry)) {
    return (
      <span className="hint">Expired on the L2: the credits service gives its credits back once the chain is safely past its expiry.</span>
    );
  }
  return (
    <TxButton
      chainId={settings.chainId}
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: settings.claimsContract,
          abi: claimCallAbi,
          functionName: "claim",
          args: [voucherFromJson(view.voucher), view.signature],
          chainId: settings.chainId,
        })
      }
      onMined={onClaimed}
    >
      Claim
    </TxButton>
  );
}
