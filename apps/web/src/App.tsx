import { Component, lazy, Suspense, useEffect, useLayoutEffect, useRef, useState, type ComponentType, type ReactNode } from "react";
import { BrowserRouter, Navigate, NavLink, useLocation } from "react-router";

import { Logo } from "./components/Logo";
import { SiteMenu } from "./components/SiteMenu";
import type { InteractiveParts } from "./interactive";
import { noteWalletButtonFocus, requestWalletList } from "./lib/wallet-intent";
import { HOME_PATH, SITE_PAGES, sitePageAt } from "./site-pages";

/** What the shell needs before the wallet and chain code has loaded: the network's name, for the header. */
export interface ShellSettings {
  networkName: string;
}

/**
 * The app's shell: the header, the menu, each page's heading and introduction. It is the entry chunk with
 * React and the router only, so a first visit paints it as soon as that small script has run; the wallet and
 * chain code (wagmi, viem, TanStack Query, the ABIs) and the page's own chunk load meanwhile, and fill the
 * header's wallet control and the page's body (interactive.tsx). docs/web.md, "Loading strategy".
 */
export function App({ settings, loadInteractive }: { settings: ShellSettings; loadInteractive: () => Promise<InteractiveParts> }) {
  // One lazy component per place, both from the one module: its providers share one wagmi configuration and
  // one query cache (interactive.tsx).
  const parts = useRef<{ Wallet: ComponentType; Page: ComponentType } | undefined>(undefined);
  if (parts.current === undefined) {
    let interactive: Promise<InteractiveParts> | undefined;
    const load = () => (interactive ??= loadInteractive());
    parts.current = {
      Wallet: lazy(() => load().then((loaded) => ({ default: loaded.WalletArea }))),
      Page: lazy(() => load().then((loaded) => ({ default: loaded.PageArea }))),
    };
  }
  const { Wallet, Page } = parts.current;
  const painted = usePainted();
  return (
    <BrowserRouter>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="brand">
          <Logo />
          <span className="brand-name">
            <span className="brand-full">Asset Verification Network</span>
            <span className="brand-short" aria-hidden="true">
              AVN
            </span>
          </span>
          <span className="network-name" title={`Network: ${settings.networkName}`}>
            {settings.networkName}
          </span>
        </div>
        <Failsafe fallback={null}>
          <Suspense fallback={<EarlyConnectButton />}>{painted ? <Wallet /> : <EarlyConnectButton />}</Suspense>
        </Failsafe>
        <SiteMenu pages={SITE_PAGES} />
      </header>
      {/* The page's body sets `data-reads-in-flight` here once loaded (interactive.tsx). */}
      <main id="main" tabIndex={-1}>
        <PageHeading />
        <Failsafe fallback={(error) => <Fatal error={error} />}>
          <Suspense fallback={<Loading />}>{painted ? <Page /> : <Loading />}</Suspense>
        </Failsafe>
      </main>
    </BrowserRouter>
  );
}

/**
 * Whether the shell's first frame is on screen: the wallet and chain code starts loading then, not before, so
 * that nothing competes with the shell's first paint for the network or the processor (a slow phone's 4G).
 * `requestAnimationFrame` runs before the frame is painted; a task queued from it runs after.
 */
function usePainted(): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => (timer = setTimeout(() => setPainted(true))));
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
  return painted;
}

function Loading() {
  return <p role="status">Loading…</p>;
}

/**
 * The page's `<h1>` and introduction, from site-pages.tsx; for a nested route of a page (an explorer view),
 * nothing: the route's own chunk has the heading. Sets the document's title, and moves the focus to the page
 * on navigation, so screen readers announce it.
 */
function PageHeading() {
  const { pathname } = useLocation();
  const found = sitePageAt(pathname);
  const title = found?.page.title ?? "Page not found";
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title} · Asset Verification Network`;
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById("main")?.focus();
  }, [title, pathname]);

  if (pathname === "/") return <Navigate to={HOME_PATH} replace />;
  if (found === undefined)
    return (
      <>
        <h1>Page not found</h1>
        <p>
          Go to <NavLink to={HOME_PATH}>Delegate</NavLink>.
        </p>
      </>
    );
  if (!found.own) return null;
  return (
    <>
      <h1>{found.page.title}</h1>
      {found.page.intro}
    </>
  );
}

/**
 * The header's Connect button while the wallet code loads: the same button, so nothing moves when the working
 * one replaces it. A click is kept and carried out by the working one, as is the focus (lib/wallet-intent.ts).
 */
function EarlyConnectButton() {
  const button = useRef<HTMLButtonElement>(null);
  // A layout effect's cleanup runs before the button leaves the document, while it can still hold the focus.
  useLayoutEffect(() => () => noteWalletButtonFocus(document.activeElement !== null && document.activeElement === button.current), []);
  return (
    <div className="wallet">
      <button ref={button} type="button" className="wallet-connect" aria-haspopup="dialog" onClick={requestWalletList}>
        Connect wallet
      </button>
    </div>
  );
}

function Fatal({ error }: { error: unknown }) {
  return (
    <p role="alert" className="fatal">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/**
 * Shows `fallback` instead of its children once they have thrown: the wallet and chain code could not load
 * (offline, a new release replaced the file) or the deployment's settings are not valid.
 */
class Failsafe extends Component<
  { fallback: ReactNode | ((error: unknown) => ReactNode); children: ReactNode },
  { error?: unknown; failed: boolean }
> {
  state: { error?: unknown; failed: boolean } = { failed: false };

  static getDerivedStateFromError(error: unknown) {
    return { error, failed: true };
  }

  render() {
    if (!this.state.failed) return this.props.children;
    const { fallback } = this.props;
    return typeof fallback === "function" ? fallback(this.state.error) : fallback;
  }
}
