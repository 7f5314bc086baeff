import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

import { App, type ShellSettings } from "./App";
import { sitePageAt } from "./site-pages";
import "./styles.css";
import "./components/wallet.css";

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

/**
 * What the shell shows of the settings, before interactive.tsx validates them all: the network's name, or
 * nothing if the settings have none (their validation then says what is wrong, in the page).
 */
function shellSettings(raw: unknown): ShellSettings {
  const name = typeof raw === "object" && raw !== null && "name" in raw ? raw.name : undefined;
  return { networkName: typeof name === "string" ? name : "" };
}

/**
 * Paints the shell from this small entry (React and the router); the shell loads the wallet and chain half once
 * painted, which fills it once it has arrived (App.tsx, interactive.tsx).
 */
async function start(root: HTMLElement): Promise<void> {
  const raw = await loadConfig();
  const loadInteractive = () => {
    // The visited page's chunk downloads beside the wallet and chain half, rather than once that has run; a
    // failure is the page's to show when it renders the page (interactive.tsx), not an unhandled rejection here.
    sitePageAt(location.pathname)
      ?.page.load()
      .catch(() => undefined);
    return import("./interactive").then(({ interactiveParts }) => interactiveParts(raw));
  };
  createRoot(root).render(
    <StrictMode>
      <App settings={shellSettings(raw)} loadInteractive={loadInteractive} />
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
