import { useIsFetching } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, useRef } from "react";
import { BrowserRouter, Navigate, NavLink, Route, Routes, useLocation } from "react-router";

import { useAppSettings } from "./app-context";
import { ConnectWallet } from "./components/ConnectWallet";
import { Logo } from "./components/Logo";
import { SiteMenu } from "./components/SiteMenu";

// Each page is its own chunk: a visitor of one page does not download the others.
const DelegatePage = lazy(() => import("./pages/DelegatePage"));
const BridgePage = lazy(() => import("./pages/BridgePage"));
const StakePage = lazy(() => import("./pages/StakePage"));
const LicensesPage = lazy(() => import("./pages/LicensesPage"));
const NetworkPage = lazy(() => import("./pages/NetworkPage"));
const GovernancePage = lazy(() => import("./pages/GovernancePage"));
const CreditsPage = lazy(() => import("./pages/CreditsPage"));
// The explorer, with its decoding ABIs, is a chunk of its own too: the other pages only link to it.
const ExplorerPage = lazy(() => import("./pages/ExplorerPage"));

export const PAGES = [
  { path: "/delegate", title: "Delegate", element: <DelegatePage /> },
  { path: "/bridge", title: "Bridge", element: <BridgePage /> },
  { path: "/stake", title: "Stake", element: <StakePage /> },
  { path: "/licenses", title: "Licenses", element: <LicensesPage /> },
  { path: "/network", title: "Network", element: <NetworkPage /> },
  { path: "/governance", title: "Governance", element: <GovernancePage /> },
  { path: "/credits", title: "Credits", element: <CreditsPage /> },
  // Its own routes below the path: blocks, transactions, addresses, jobs, attestations.
  { path: "/explorer", title: "Explorer", element: <ExplorerPage />, nested: true },
] as const;

export function App() {
  return (
    <BrowserRouter>
      <Layout />
    </BrowserRouter>
  );
}

function Layout() {
  const { config } = useAppSettings();
  const readsInFlight = useIsFetching();
  return (
    <>
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
          <span className="network-name" title={`Network: ${config.name}`}>
            {config.name}
          </span>
        </div>
        <ConnectWallet />
        <SiteMenu pages={PAGES} />
      </header>
      {/* How many chain and service reads are under way: lets a test (or a tool) wait until the page's reads
          have landed instead of waiting a fixed time. */}
      <main id="main" tabIndex={-1} data-reads-in-flight={readsInFlight}>
        <Suspense fallback={<p role="status">Loading…</p>}>
          <Routes>
            <Route path="/" element={<Navigate to="/delegate" replace />} />
            {PAGES.map((page) => (
              <Route
                key={page.path}
                path={"nested" in page ? `${page.path}/*` : page.path}
                element={<Titled title={page.title}>{page.element}</Titled>}
              />
            ))}
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </main>
    </>
  );
}

/** Sets the document title and moves focus to the page on navigation, so screen readers announce it. */
function Titled({ title, children }: { title: string; children: React.ReactNode }) {
  const location = useLocation();
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title} · Asset Verification Network`;
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById("main")?.focus();
  }, [title, location.pathname]);
  return <>{children}</>;
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Go to <NavLink to="/delegate">Delegate</NavLink>.
      </p>
    </section>
  );
}
