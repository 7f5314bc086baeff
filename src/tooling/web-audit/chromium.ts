// The Chromium the audit drives: Debian's package (`/usr/bin/chromium`) unless told otherwise, launched by
// Playwright for page discovery and axe, and by chrome-launcher for Lighthouse.
import { constants } from "node:fs";
import { access } from "node:fs/promises";

import { WebAuditError } from "./errors.ts";

/** Where Debian's `chromium` package puts the browser. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";

/** Throws a WebAuditError "NO_CHROMIUM" saying what to install unless `chromiumPath` is an executable. */
export async function checkChromium(chromiumPath: string): Promise<void> {
  try {
    await access(chromiumPath, constants.X_OK);
  } catch {
    throw new WebAuditError(
      "NO_CHROMIUM",
      `No Chromium at ${chromiumPath}: install Debian's (apt-get install chromium), or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
    );
  }
}

/** The flags every launch takes: root (as in CI containers) cannot use Chromium's sandbox. */
export function sandboxFlags(): string[] {
  return process.getuid?.() === 0 ? ["--no-sandbox"] : [];
}
