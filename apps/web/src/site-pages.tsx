import type { ComponentType, ReactNode } from "react";

/**
 * The app's pages as the shell knows them: the path, the title (the menu's link, the `<h1>`, the document's
 * title) and the introduction the shell shows under the `<h1>` (`.intro`, in body text). Part of the entry, with no wallet or chain
 * code: the heading and the introduction are on screen before a page's own chunk has loaded (docs/web.md,
 * "Loading strategy"). A page's chunk renders what follows them.
 */
export interface SitePage {
  path: string;
  title: string;
  intro: ReactNode;
  /** Has routes of its own below the path (the explorer), each with its own `<h1>`. */
  nested?: true;
  /**
   * The page's own chunk (a dynamic import: none of its code is in the entry). A visitor of one page does not
   * download the others. Once the shell has painted, the visited page's chunk downloads beside the wallet and
   * chain code (main.tsx); interactive.tsx renders it. The module system shares an import already started.
   */
  load: () => Promise<{ default: ComponentType }>;
}

export const SITE_PAGES: readonly SitePage[] = [
  {
    path: "/delegate",
    title: "Delegate",
    load: () => import("./pages/DelegatePage"),
    intro: (
      <>
        <p className="intro">
          A circuit node signs with its own burner wallet. Delegating your licenses to that wallet lets the node work for them, while the
          licenses stay in your wallet.
        </p>
        <p className="intro">
          Holding assets in a cold wallet? That is a different delegation: with{" "}
          <a href="https://docs.delegate.xyz/" target="_blank" rel="noreferrer">
            delegate.xyz
          </a>{" "}
          the cold wallet states on-chain that a hot wallet may act for it, and answers asked with delegations counted include its holdings.
        </p>
      </>
    ),
  },
  {
    path: "/bridge",
    title: "Bridge",
    load: () => import("./pages/BridgePage"),
    intro: (
      <p className="intro">
        Move ETH and primary tokens between L1 and L2 through the standard bridge. A withdrawal to L1 waits for its proof and the challenge
        period; a fast order, filled by a solver within a few blocks for a fee, does not.
      </p>
    ),
  },
  {
    path: "/stake",
    title: "Stake",
    load: () => import("./pages/StakePage"),
    intro: (
      <p className="intro">
        Staked tokens are backed 1:1 by primary tokens and cannot be transferred. Getting primary tokens back takes a redemption: the longer
        the unlock period you choose, the larger the share you receive.
      </p>
    ),
  },
  {
    path: "/licenses",
    title: "Licenses",
    load: () => import("./pages/LicensesPage"),
    intro: (
      <p className="intro">
        A node license is the right to run a circuit node: delegated to the node&apos;s burner wallet, it lets the node answer verification
        jobs, and earns their fees and a share of each epoch&apos;s rewards. The price rises in tiers as more licenses are sold.
      </p>
    ),
  },
  {
    path: "/network",
    title: "Network",
    load: () => import("./pages/NetworkPage"),
    intro: (
      <p className="intro">
        The circuit nodes that answer verification jobs, how live and how good their answers are, the protocol&apos;s parameters and the
        latest jobs, read from the L2 as they happen.
      </p>
    ),
  },
  {
    path: "/governance",
    title: "Governance",
    load: () => import("./pages/GovernancePage"),
    intro: (
      <p className="intro">
        Holders of the primary token on L1 decide the L2 protocol&apos;s parameters. A proposal passes by a vote on L1, waits in the
        timelock, then travels to L2 through the bridge&apos;s messenger, where the governance executor makes the changes.
      </p>
    ),
  },
  {
    path: "/credits",
    title: "Credits",
    load: () => import("./pages/CreditsPage"),
    intro: (
      <p className="intro">
        Buy credits with a card or another payment method, spend them on tokens, staked tokens, node licenses or game items, and claim what
        you bought on the L2 with your wallet. Your wallet address is your credits account.
      </p>
    ),
  },
  {
    path: "/explorer",
    title: "Explorer",
    // With its decoding ABIs: the other pages only link to it.
    load: () => import("./pages/ExplorerPage"),
    intro: <p className="intro">The latest blocks and transactions of both chains, updated every 2 s.</p>,
    nested: true,
  },
];

/** Where `/` leads. */
export const HOME_PATH = "/delegate";

/**
 * The page a path belongs to, and whether the path is the page's own (where the shell shows its `<h1>` and
 * introduction) rather than one of its nested routes (which have their own); undefined for an unknown path.
 */
export function sitePageAt(pathname: string): { page: SitePage; own: boolean } | undefined {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, "") : pathname;
  for (const page of SITE_PAGES) {
    if (path === page.path) return { page, own: true };
    if (page.nested === true && path.startsWith(`${page.path}/`)) return { page, own: false };
  }
  return undefined;
}
