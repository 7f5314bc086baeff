import { useConnection } from "wagmi";

import { useAppSettings } from "../app-context";
import { ChainNotice } from "../components/ChainNotice";
import { WalletRequired } from "../components/WalletRequired";
import { describeError } from "../lib/errors";
import { BuyCredits } from "./credits/BuyCredits";
import { CatalogueSection } from "./credits/CatalogueSection";
import { creditsSettings, serviceMismatch, type CreditsSettings } from "./credits/settings";
import { useCatalogue, useCreditAccount } from "./credits/useCredits";
import { Vouchers } from "./credits/Vouchers";
import { YourCredits } from "./credits/YourCredits";

/**
 * The credits channel for a buyer: credits bought with ordinary payment methods (Stripe), spent on items of
 * the operator's catalogue, each redemption a voucher the wallet claims on the L2. Credits, the catalogue
 * and the vouchers come from the credits service; the claim is a transaction to the claim contract.
 */
export default function CreditsPage() {
  const settings = creditsSettings(useAppSettings());
  return (
    <section>
      <ChainNotice expected="l2" />
      <WalletRequired>Connect a wallet to buy credits and to redeem them.</WalletRequired>
      {settings === undefined ? (
        <p className="error" role="alert">
          This deployment's configuration names no credits channel (its service URL and its claim contract, VoucherClaims).
        </p>
      ) : (
        <Credits settings={settings} />
      )}
    </section>
  );
}

function Credits({ settings }: { settings: CreditsSettings }) {
  const { address: wallet } = useConnection();
  const catalogue = useCatalogue(settings);
  const account = useCreditAccount(settings, wallet);
  const mismatch = catalogue.data === undefined ? undefined : serviceMismatch(settings, catalogue.data);
  return (
    <>
      <YourCredits wallet={wallet} account={account.data} error={account.error} />
      <BuyCredits settings={settings} catalogue={catalogue.data} wallet={wallet} />
      {catalogue.data === undefined ? (
        <section aria-labelledby="catalogue-heading">
          <h2 id="catalogue-heading">Catalogue</h2>
          {catalogue.error === null ? (
            <p role="status">Loading the catalogue…</p>
          ) : (
            <p className="error">Could not read the catalogue from the credits service: {describeError(catalogue.error)}</p>
          )}
        </section>
      ) : mismatch !== undefined ? (
        <p className="error" role="alert">
          {mismatch}
        </p>
      ) : (
        <CatalogueSection settings={settings} catalogue={catalogue.data} account={account.data} />
      )}
      <Vouchers settings={settings} catalogue={catalogue.data} wallet={wallet} account={account.data} />
    </>
  );
}
