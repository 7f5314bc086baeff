import path from "node:path";

import type { Browser } from "playwright-core";

import type { StackFile } from "../../../src/common/stack-file.ts";
import { ensureWebBuild, webPaths } from "../../../src/web/web-build.ts";
import { webConfigFromStack } from "../../../src/web/web-config.ts";
import { startWebServer, type RunningWebServer } from "../../../src/web/web-server.ts";
import { requireService, type SkippableContext } from "../services.ts";
import { CHROMIUM, launchChromium } from "./browser.ts";

// What every browser test's `before` does: Chromium, and the web app built and served for a stack.

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** Headless Chromium; without it the hook's suite fails under CI and is skipped (saying why) elsewhere. */
export async function chromiumOrSkip(context: SkippableContext): Promise<Browser> {
  return (await launchChromium()) ?? requireService(context, CHROMIUM);
}

/** The web app, built if its build is missing or stale, served on a free port with `stack`'s configuration. */
export async function serveWebApp(stack: StackFile): Promise<RunningWebServer> {
  await ensureWebBuild(projectRoot);
  return startWebServer({ distDir: webPaths(projectRoot).distDir, config: webConfigFromStack(stack), port: 0 });
}
