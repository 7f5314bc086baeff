import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import type { StackFile } from "../../../src/devnet/stack-file.ts";
import { namedWebConfig, webConfigFromStack } from "../../../src/web/web-config.ts";
import { startWebServer, type RunningWebServer } from "../../../src/web/web-server.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
const address = (digit: string) => `0x${digit.repeat(40)}`;

/** A stack file with every address the web app needs. */
function stack(): StackFile {
  return {
    l1: { chainId: 900, rpcUrl: "http://127.0.0.1:9001" },
    l2: { chainId: 901, rpcUrl: "http://127.0.0.1:9002", wsUrl: "ws://127.0.0.1:9002" },
    contracts: {
      l1: { PrimaryToken: address("1"), OptimismPortal: address("2"), L2OutputOracle: address("3"), L1StandardBridge: address("4") },
      l2: {
        PrimaryToken: address("5"),
        StakedToken: address("6"),
        NodeLicense: address("7"),
        NodeRegistry: address("8"),
        VerificationRegistry: address("9"),
      },
    },
  };
}

describe("web app server and settings", function () {
  let distDir: string;
  let server: RunningWebServer;

  before(async function () {
    distDir = await mkdtemp(path.join(tmpdir(), "web-dist-"));
    await mkdir(path.join(distDir, "assets"));
    await writeFile(path.join(distDir, "index.html"), "<!doctype html><title>app</title>");
    await writeFile(path.join(distDir, "assets", "index-abc123.js"), "console.log(1)");
    server = await startWebServer({ distDir, config: webConfigFromStack(stack()), port: 0 });
  });
  after(async function () {
    await server?.close();
    await rm(distDir, { recursive: true, force: true });
  });

  it("serves the deployment's settings, checksummed, never cached", async function () {
    const response = await fetch(`${server.url}/config.json`);
    expect(response.status).to.equal(200);
    expect(response.headers.get("cache-control")).to.equal("no-store");
    const config = (await response.json()) as { l2: { chainId: number; wsUrl: string }; contracts: { l2: { NodeRegistry: string } } };
    expect(config.l2.chainId).to.equal(901);
    expect(config.l2.wsUrl).to.equal("ws://127.0.0.1:9002");
    expect(config.contracts.l2.NodeRegistry).to.equal("0x8888888888888888888888888888888888888888");
  });

  it("answers every page route with the app, a missing asset with 404, and hashed assets as immutable", async function () {
    for (const route of ["/", "/delegate", "/network?tab=jobs"]) {
      const response = await fetch(`${server.url}${route}`);
      expect(response.status, route).to.equal(200);
      expect(await response.text(), route).to.contain("<title>app</title>");
      expect(response.headers.get("cache-control"), route).to.equal("no-cache");
    }
    expect((await fetch(`${server.url}/assets/missing.js`)).status).to.equal(404);
    const asset = await fetch(`${server.url}/assets/index-abc123.js`);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get("cache-control")).to.contain("immutable");
  });

  it("lets the page reach only itself and the deployment's RPC origins", async function () {
    const policy = (await fetch(`${server.url}/delegate`)).headers.get("content-security-policy") ?? "";
    expect(policy).to.contain("connect-src 'self' http://127.0.0.1:9001 http://127.0.0.1:9002 ws://127.0.0.1:9002");
    expect(policy).to.contain("script-src 'self'");
    expect(policy).to.contain("frame-ancestors 'none'");
  });

  it("refuses settings with a missing or zero address, naming the field", async function () {
    const broken = stack();
    broken.contracts!.l2!.NodeRegistry = "0x0000000000000000000000000000000000000000";
    delete broken.contracts!.l1!.OptimismPortal;
    expect(() => webConfigFromStack(broken)).to.throw(/contracts\.l1\.OptimismPortal .*; contracts\.l2\.NodeRegistry is the zero address/);
  });

  it("refuses the committed test-network file until its addresses are filled in, and names outside the folder", async function () {
    let message = "";
    await namedWebConfig(projectRoot, "testnet").catch((error: Error) => (message = error.message));
    expect(message).to.match(/contracts\.l2\.NodeRegistry is the zero address/);
    await namedWebConfig(projectRoot, "../../package").catch((error: Error) => (message = error.message));
    expect(message).to.match(/not a network file name/);
  });
});
