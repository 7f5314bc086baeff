import { QueryClient, QueryClientProvider, useIsFetching } from "@tanstack/react-query";
import { lazy, useEffect, type ReactNode } from "react";
import { Route, Routes } from "react-router";
import { WagmiContext, WagmiProvider, type Config } from "wagmi";

import { AppSettingsProvider, type AppSettings } from "./app-context";
import { ConnectWallet } from "./components/ConnectWallet";
import { appChains } from "./config/chains";
import { parseNetworkConfig } from "@avn/protocol/network-config";
import { SITE_PAGES } from "./site-pages";
import { wagmiConfig } from "./wagmi";

// The pages' components, each from its own chunk (site-pages.tsx).
const PAGES = SITE_PAGES.map((page) => ({ path: page.nested === true ? `${page.path}/*` : page.path, Page: lazy(page.load) }));

/** The two places of the shell (App.tsx) that the wallet and chain code fills. */
export interface InteractiveParts {
  /** The header's wallet control. */
  WalletArea: () => ReactNode;
  /** The page's body, below the heading and introduction the shell shows. */
  PageArea: () => ReactNode;
}

/**
 * The wallet and chain half of the app, loaded once the shell has painted (App.tsx): validates the
 * deployment's settings (a clear error in the page if they are not valid), then builds the one wagmi
 * configuration and the one query cache that both places share. Each place has its own providers over them (a
 * provider cannot wrap the shell's already painted header from here); only the header's hydrates the wagmi
 * configuration (reconnects the wallet of the last visit).
 */
export function interactiveParts(rawConfig: unknown): InteractiveParts {
  const config = parseNetworkConfig(rawConfig);
  const chains = appChains(config);
  const settings: AppSettings = { config, chains };
  const wagmi = wagmiConfig(config, chains);
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 2_000, retry: 2 } } });
  return {
    WalletArea: () => (
      <Providers wagmi={wagmi} queryClient={queryClient} settings={settings} hydrate>
        <ConnectWallet />
      </Providers>
    ),
    PageArea: () => (
      <Providers wagmi={wagmi} queryClient={queryClient} settings={settings} hydrate={false}>
        <ReadsInFlight />
        <Routes>
          {PAGES.map(({ path, Page }) => (
            <Route key={path} path={path} element={<Page />} />
          ))}
          {/* The shell says "Page not found" for other paths. */}
          <Route path="*" element={null} />
        </Routes>
      </Providers>
    ),
  };
}

function Providers({
  wagmi,
  queryClient,
  settings,
  hydrate,
  children,
}: {
  wagmi: Config;
  queryClient: QueryClient;
  settings: AppSettings;
  /** This place's provider hydrates the configuration (reconnects the last visit's wallet); the other's does not. */
  hydrate: boolean;
  children: ReactNode;
}) {
  const inner = (
    <QueryClientProvider client={queryClient}>
      <AppSettingsProvider value={settings}>{children}</AppSettingsProvider>
    </QueryClientProvider>
  );
  // WagmiProvider also hydrates the configuration: it reconnects the last visit's wallet, or else empties the
  // connections. Twice over one configuration, the second would undo the first's reconnection; the other
  // place gets the configuration alone.
  return hydrate ? (
    <WagmiProvider config={wagmi}>{inner}</WagmiProvider>
  ) : (
    <WagmiContext.Provider value={wagmi}>{inner}</WagmiContext.Provider>
  );
}

/**
 * How many chain and service reads are under way, as `data-reads-in-flight` on the page's `<main>`: lets a test
 * (or a tool) wait until the page's reads have landed instead of waiting a fixed time. Absent until the page's
 * body has loaded.
 */
function ReadsInFlight() {
  const count = useIsFetching();
  useEffect(() => {
    const main = document.getElementById("main");
    main?.setAttribute("data-reads-in-flight", String(count));
  }, [count]);
  useEffect(() => () => document.getElementById("main")?.removeAttribute("data-reads-in-flight"), []);
  return null;
}
