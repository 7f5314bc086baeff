import type { ComponentType } from "react";

type PageModule = Promise<{ default: ComponentType }>;

/**
 * Each page's chunk, by the page's path (site-pages.tsx): a visitor of one page does not download the others.
 * The explorer, with its decoding ABIs, is a chunk of its own too: the other pages only link to it. Once the
 * shell has painted, the visited page's chunk downloads beside the wallet and chain code (main.tsx);
 * interactive.tsx renders it.
 */
export const PAGE_LOADERS: Readonly<Record<string, () => PageModule>> = {
  "/delegate": () => import("./pages/DelegatePage"),
  "/bridge": () => import("./pages/BridgePage"),
  "/stake": () => import("./pages/StakePage"),
  "/licenses": () => import("./pages/LicensesPage"),
  "/network": () => import("./pages/NetworkPage"),
  "/governance": () => import("./pages/GovernancePage"),
  "/credits": () => import("./pages/CreditsPage"),
  "/explorer": () => import("./pages/ExplorerPage"),
};
