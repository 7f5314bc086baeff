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

// The element in which the web server puts the deployment's settings (src/web/page-html.ts).
const CONFIG_ELEMENT_ID = "avn-network-config";

/**
 * The deployment's settings: inline in the page as the web server serves it (no round trip before the first
 * render), or from `/config.json` (Vite's dev server, which serves index.html as it is).
 */
async function loadConfig(): Promise<unknown> {
  const inline = document.getElementById(CONFIG_ELEMENT_ID)?.textContent;
  if (inline) return JSON.parse(inline);
  const response = await fetch("/config.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`The server has no network configuration (/config.json answered ${response.status}).`);
  return response.json();
}

/** Loads the deployment's settings and starts the app on them. */
async function start(root: HTMLElement): Promise<void> {
  const config = parseNetworkConfig(await loadConfig());
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
