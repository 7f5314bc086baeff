import type { ReactNode } from "react";
import { useConnection } from "wagmi";

/**
 * The one line a page that acts shows while no wallet is connected, saying what a wallet is for there ("Connect
 * a wallet to stake…"); nothing once one is connected, nor while wagmi reconnects the last one. Pages that only
 * read show none. Its style is in wallet.css, which the entry (main.tsx) imports for the header's Connect
 * button: imported here as well, the stylesheet would follow this component into the shared chunk, a second
 * stylesheet to fetch.
 */
export function WalletRequired({ children }: { children: ReactNode }) {
  const { status } = useConnection();
  if (status === "connected" || status === "reconnecting") return null;
  return (
    <p className="wallet-required" data-testid="wallet-required">
      {children}
    </p>
  );
}
