import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { WagmiProvider } from "wagmi";

import { App } from "./App";
import { AppSettingsProvider } from "./app-context";
import { appChains } from "./config/chains";
import { parseNetworkConfig } from "@avn/protocol/network-config";
import "./styles.css";
import { wagmiConfig } from "./wagmi";

/** Loads the deployment's settings from the server (`/config.json`) and starts the app on them. */
async function start(root: HTMLElement): Promise<void> {
  const response = await fetch("/config.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`The server has no network configuration (/config.json answered ${response.status}).`);
  const config = parseNetworkConfig(await response.json());
  const chains = appChains(config);
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 2_000, retry: 2 } } });
  createRoot(root).render(
    <StrictMode>
      <WagmiProvider config={wagmiConfig(config, chains)}>
        <QueryClientProvider client={queryClient}>
          <AppSettingsProvider value={{ config, chains }}>
            <App />
          </AppSettingsProvider>
        </QueryClientProvider>
      </WagmiProvider>
    </StrictMode>,
  );
}

const root = document.getElementById("root")!;
start(root).catch((error: unknown) => {
  root.innerHTML = "";
  const message = document.createElement("p");
  message.setAttribute("role", "alert");
  message.className = "fatal";
  message.textContent = error instanceof Error ? error.message : String(error);
  root.append(message);
});
