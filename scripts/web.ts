// `npm run web -- --network <name>`: builds (when stale) and serves the web app for a committed network
// file, `apps/web/networks/<name>.json` (for example `testnet`); `npm start` serves it for the local
// stack on its own. `--port` sets the port (default 8788, or WEB_PORT).
import path from "node:path";
import { parseArgs } from "node:util";

import { ensureWebBuild, webPaths } from "../src/web/web-build.ts";
import { namedWebConfig } from "../src/web/web-config.ts";
import { startWebServer } from "../src/web/web-server.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { network: { type: "string" }, port: { type: "string" } } });
try {
  if (values.network === undefined)
    throw new Error("name the network: npm run web -- --network testnet (the local stack's app is served by npm start)");
  const config = await namedWebConfig(projectRoot, values.network);
  await ensureWebBuild(projectRoot, (line) => console.log(line));
  const server = await startWebServer({
    distDir: webPaths(projectRoot).distDir,
    config,
    port: Number(values.port ?? process.env.WEB_PORT ?? 8788),
  });
  console.log(`Web app for ${config.name} at ${server.url} (Ctrl-C stops it)`);
  process.once("SIGINT", () => void server.close().then(() => process.exit(130)));
} catch (error) {
  console.error(`The web app could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
