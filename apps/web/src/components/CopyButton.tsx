import { useEffect, useRef, useState } from "react";

/** How long "Copied" stays. */
const SHOWN_MS = 1_500;

/**
 * A small button that copies `value` (an address, a hash) to the clipboard. Its `label` names it for screen
 * readers ("Copy address"); the outcome ("Copied", or why not) is announced by a status region and shown for
 * a moment over the value's end, positioned so nothing moves.
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [outcome, setOutcome] = useState<"" | "Copied" | "Not copied">("");
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const copy = async () => {
    let result: "Copied" | "Not copied";
    try {
      // Undefined outside a secure context (a plain-HTTP address other than localhost): said as "Not copied".
      await navigator.clipboard.writeText(value);
      result = "Copied";
    } catch {
      result = "Not copied";
    }
    setOutcome(result);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setOutcome(""), SHOWN_MS);
  };

  return (
    <span className="copy">
      <button
        type="button"
        className={outcome === "Copied" ? "copy-button copied" : "copy-button"}
        aria-label={label}
        title={label}
        onClick={() => void copy()}
      >
        <svg viewBox="0 0 16 16" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" strokeWidth="1.5">
          {outcome === "Copied" ? (
            <path d="m3 8.5 3.2 3.2L13 4.8" strokeLinecap="round" strokeLinejoin="round" />
          ) : (
            <>
              <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
              <path d="M10.5 3.5V3A1.5 1.5 0 0 0 9 1.5H4A1.5 1.5 0 0 0 2.5 3v5A1.5 1.5 0 0 0 4 9.5h.5" />
            </>
          )}
        </svg>
      </button>
      <span className="copy-status" role="status">
        {outcome}
      </span>
    </span>
  );
}
