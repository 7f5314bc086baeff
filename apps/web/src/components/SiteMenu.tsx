import { useRef, useState } from "react";
import { NavLink, useLocation } from "react-router";

import { useDismiss } from "../hooks/useDismiss";
import { ThemeSwitch } from "./ThemeSwitch";

/**
 * The pages' links and the theme switch. On a wide screen they are the header's second row; below 720 px
 * (styles.css) they sit behind a menu button (a disclosure: `aria-expanded`, `aria-controls`), which Escape,
 * a click elsewhere and any navigation close.
 */
export function SiteMenu({ pages }: { pages: ReadonlyArray<{ path: string; title: string }> }) {
  const { pathname } = useLocation();
  // Open on the page where it was opened: a navigation (a link here, Back, a link in the page) closes it.
  const [openOn, setOpenOn] = useState<string | undefined>(undefined);
  const open = openOn === pathname;
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);

  useDismiss(open, panel, button, (how) => {
    setOpenOn(undefined);
    if (how === "key") button.current?.focus();
  });

  return (
    <>
      <button
        ref={button}
        type="button"
        className="menu-button"
        aria-expanded={open}
        aria-controls="site-menu"
        onClick={() => setOpenOn(open ? undefined : pathname)}
      >
        <svg
          viewBox="0 0 20 20"
          aria-hidden="true"
          focusable="false"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
          strokeLinecap="round"
        >
          {open ? <path d="m5 5 10 10M15 5 5 15" /> : <path d="M3 5h14M3 10h14M3 15h14" />}
        </svg>
        <span className="visually-hidden">Menu</span>
      </button>
      <div ref={panel} id="site-menu" className={open ? "site-menu open" : "site-menu"}>
        <nav aria-label="Pages">
          <ul>
            {pages.map((page) => (
              <li key={page.path}>
                <NavLink to={page.path} onClick={() => setOpenOn(undefined)}>
                  {page.title}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <ThemeSwitch />
      </div>
    </>
  );
}
