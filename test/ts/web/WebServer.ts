import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";

import { expect } from "chai";

import type { StackFile } from "../../../src/common/stack-file.ts";
import { isWebBuildCurrent, SHARED_SOURCES } from "../../../src/web/web-build.ts";
import { namedWebConfig, webConfigFromStack } from "../../../src/web/web-config.ts";
import { startWebServer, type RunningWebServer } from "../../../src/web/web-server.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
const INLINE_SCRIPT = 'document.documentElement.dataset.theme = "dark";';
const BIG_ASSET = "export const table = [" + Array.from({ length: 400 }, (_, i) => `"row ${i}"`).join(",") + "];\n";
const address = (digit: string) => `0x${digit.repeat(40)}`;

/** A stack file with every address the web app needs, and `extra` contracts on either chain. */
function stack(extra: { l1?: Record<string, string>; l2?: Record<string, string> } = {}): StackFile {
  return {
    l1: { chainId: 900, rpcUrl: "http://127.0.0.1:9001" },
    l2: { chainId: 901, rpcUrl: "http://127.0.0.1:9002", wsUrl: "ws://127.0.0.1:9002" },
    contracts: {
      l1: {
        PrimaryToken: address("1"),
        OptimismPortal: address("2"),
        L2OutputOracle: address("3"),
        L1StandardBridge: address("4"),
        ...extra.l1,
      },
      l2: {
        PrimaryToken: address("5"),
        StakedToken: address("6"),
        NodeLicense: address("7"),
        NodeRegistry: address("8"),
        VerificationRegistry: address("9"),
        ...extra.l2,
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
    // A build as Vite writes it: an inline script (the theme, before first paint), the entry with its one
    // preloaded import, and compressed copies of a large asset.
    await writeFile(
      path.join(distDir, "index.html"),
      `<!doctype html><html><head><title>app</title><script>${INLINE_SCRIPT}</script>` +
        `<script type="module" crossorigin src="/assets/index-abc123.js"></script>` +
        `<link rel="modulepreload" crossorigin href="/assets/shell-s.js"></head></html>`,
    );
    await writeFile(path.join(distDir, "assets", "index-abc123.js"), "console.log(1)");
    await writeFile(path.join(distDir, "assets", "big-1.js"), BIG_ASSET);
    await writeFile(path.join(distDir, "assets", "big-1.js.br"), brotliCompressSync(BIG_ASSET));
    await writeFile(path.join(distDir, "assets", "big-1.js.gz"), gzipSync(BIG_ASSET));
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
      expect(response.headers.get("content-type"), route).to.equal("text/html; charset=utf-8");
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
    // The build's inline script runs (named by its hash), and no other inline script would.
    const hash = createHash("sha256").update(INLINE_SCRIPT).digest("base64");
    expect(policy).to.match(new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, "\\$&")}';`));
    expect(policy).to.contain("frame-ancestors 'none'");
  });

  it("puts the settings in each page, script-safe, and preloads the entry's imports only", async function () {
    const htmlOf = async (route: string) => {
      const html = await (await fetch(`${server.url}${route}`)).text();
      const config = /<script type="application\/json" id="avn-network-config">(.*?)<\/script>/.exec(html)?.[1];
      const preloads = [...html.matchAll(/<link rel="modulepreload" crossorigin href="([^"]+)">/g)].map((match) => match[1]);
      return { config: config === undefined ? undefined : (JSON.parse(config) as { l2: { chainId: number } }), preloads, html };
    };
    // Every route: the settings, and the build's own preload of the entry's import. No page's chunk: the app's
    // shell loads it once painted, so that it does not compete with the first paint.
    for (const route of ["/network?tab=jobs", "/explorer/tx/0xabc", "/", "/index.html", "/nowhere"]) {
      const page = await htmlOf(route);
      expect(page.config?.l2.chainId, route).to.equal(901);
      expect(page.preloads, route).to.deep.equal(["/assets/shell-s.js"]);
    }
    // Settings that hold "</script>" cannot end the element early.
    const hostile = await startWebServer({
      distDir,
      config: { ...webConfigFromStack(stack()), name: "</script><script>alert(1)</script>" },
      port: 0,
    });
    try {
      const page = await (await fetch(`${hostile.url}/network`)).text();
      expect(page).to.not.contain("</script><script>alert(1)");
      const inline = /id="avn-network-config">(.*?)<\/script>/.exec(page)![1];
      expect((JSON.parse(inline) as { name: string }).name).to.equal("</script><script>alert(1)</script>");
    } finally {
      await hostile.close();
    }
  });

  it("sends a hashed asset compressed as the browser accepts it, the same bytes once decoded", async function () {
    const get = (encoding: string) => fetch(`${server.url}/assets/big-1.js`, { headers: { "accept-encoding": encoding } });
    const brotli = await get("gzip, deflate, br");
    expect(brotli.headers.get("content-encoding")).to.equal("br");
    expect(brotli.headers.get("cache-control")).to.contain("immutable");
    expect(await brotli.text()).to.equal(BIG_ASSET); // fetch decodes it
    expect((await get("gzip")).headers.get("content-encoding")).to.equal("gzip");
    const plain = await get("identity");
    expect(plain.headers.get("content-encoding")).to.equal(null);
    expect(await plain.text()).to.equal(BIG_ASSET);
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

describe("web app settings: the credits channel", function () {
  const stackWith = (credits: Pick<StackFile, "credits">, voucherClaims?: string): StackFile => ({
    ...stack({ l2: voucherClaims === undefined ? {} : { VoucherClaims: voucherClaims } }),
    ...credits,
  });
  const service = {
    url: "http://127.0.0.1:8789",
    webhookUrl: "http://127.0.0.1:8789/credits/webhooks/stripe",
    webhookSecret: "whsec_settings_test",
  };

  it("are the service's URL and the claim contract together or neither, and the server lets the page reach the service", async function () {
    // A stack without the channel still loads (its Credits page says it has none).
    const without = webConfigFromStack(stackWith({}));
    expect([without.credits, without.contracts.l2.VoucherClaims]).to.deep.equal([undefined, undefined]);
    expect(() => webConfigFromStack(stackWith({ credits: service }))).to.throw(
      /contracts\.l2\.VoucherClaims is missing: the credits service \(credits\.url\) needs its claim contract/,
    );
    expect(() => webConfigFromStack(stackWith({}, address("a")))).to.throw(/credits\.url is missing: the claim contract/);
    const config = webConfigFromStack(stackWith({ credits: service }, address("a")));
    expect(config.credits).to.deep.equal({ url: "http://127.0.0.1:8789" });
    expect(config.contracts.l2.VoucherClaims).to.equal("0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa");
    // The committed test-network file carries both, unfilled: refused until they are.
    let message = "";
    await namedWebConfig(projectRoot, "testnet").catch((error: Error) => (message = error.message));
    expect(message).to.match(
      /contracts\.l2\.VoucherClaims is the zero address.*; credits\.url is empty: this deployment's file is not filled in/,
    );
  });
});

describe("web app settings: governance's addresses", function () {
  const stackWith = (governance: Record<string, string>): StackFile => stack({ l1: governance });

  it("are taken all four or none, and the devnet's L1 block time comes with them", async function () {
    // A deployment from before governance still loads (its Governance page says it has none).
    expect(webConfigFromStack(stackWith({})).contracts.l1.Governor).to.equal(undefined);
    const half = stackWith({ Governor: address("a"), Timelock: address("b") });
    expect(() => webConfigFromStack(half)).to.throw(
      /contracts\.l1\.L1CrossDomainMessenger is missing: governance needs all of .*; contracts\.l2\.GovernanceExecutor is missing/,
    );
    const whole = stackWith({ Governor: address("a"), Timelock: address("b"), L1CrossDomainMessenger: address("c") });
    whole.contracts!.l2!.GovernanceExecutor = address("d");
    const config = webConfigFromStack(whole);
    expect([config.contracts.l1.Governor, config.contracts.l2.GovernanceExecutor]).to.deep.equal([
      "0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa",
      "0xDDdDddDdDdddDDddDDddDDDDdDdDDdDDdDDDDDDd",
    ]);
    expect(config.l1.blockSeconds).to.equal(2);
  });
});

describe("web app settings: the intent layer", function () {
  const settlers = { l1: { DestinationSettler: address("b") }, l2: { OriginSettler: address("c") } };
  const solver = { address: address("d"), pid: 1, logFile: "solver.log", minFeeBps: 100 };

  it("are both settlers or neither, with the stack's solver fee only beside them", async function () {
    // A deployment from before the intent layer still loads (its Bridge page says fast withdrawals are not available).
    const without = webConfigFromStack(stack());
    expect([without.contracts.l2.OriginSettler, without.contracts.l1.DestinationSettler, without.intents]).to.deep.equal([
      undefined,
      undefined,
      undefined,
    ]);
    expect(() => webConfigFromStack(stack({ l2: settlers.l2 }))).to.throw(
      /contracts\.l1\.DestinationSettler is missing: the intent layer's OriginSettler \(contracts\.l2\) needs its DestinationSettler/,
    );
    expect(() => webConfigFromStack(stack({ l1: settlers.l1 }))).to.throw(/contracts\.l2\.OriginSettler is missing/);
    expect(() => webConfigFromStack({ ...stack(), solver })).to.throw(/intents is given without the intent layer's settlers/);
    // A stack without its solver: the settlers, and the page offers the reference solver's default fee.
    expect(webConfigFromStack(stack(settlers)).intents).to.equal(undefined);
    const config = webConfigFromStack({ ...stack(settlers), solver });
    expect(config.intents).to.deep.equal({ minFeeBps: 100 });
    expect([config.contracts.l1.DestinationSettler, config.contracts.l2.OriginSettler]).to.deep.equal([
      "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB",
      "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC",
    ]);
    // A fee of the whole input would leave nothing to pay out.
    expect(() => webConfigFromStack({ ...stack(settlers), solver: { ...solver, minFeeBps: 10_000 } })).to.throw(/intents\.minFeeBps/);
  });

  it("carries fast deposits' settlers (l1.OriginSettler, l2.DestinationSettler) both or neither", async function () {
    const deposits = { l1: { OriginSettler: address("e") }, l2: { DestinationSettler: address("f") } };
    const both = {
      l1: { ...settlers.l1, ...deposits.l1 },
      l2: { ...settlers.l2, ...deposits.l2 },
    };
    const config = webConfigFromStack(stack(both));
    expect([config.contracts.l1.OriginSettler, config.contracts.l2.DestinationSettler]).to.deep.equal([
      "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE",
      "0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF",
    ]);
    expect(() => webConfigFromStack(stack({ l1: both.l1, l2: settlers.l2 }))).to.throw(
      /contracts\.l2\.DestinationSettler is missing: fast deposits' OriginSettler \(contracts\.l1\) needs its DestinationSettler/,
    );
    expect(() => webConfigFromStack(stack({ l1: settlers.l1, l2: both.l2 }))).to.throw(/contracts\.l1\.OriginSettler is missing/);
  });
});

/**
 * The app bundles the shared protocol package (SHARED_SOURCES: the governance proposal encoding and rules,
 * the credits channel's typed data, the network configuration): a change to any of it must make the build stale as a change
 * to the app's own sources does, or the page could sign an older CreditRedemption than the service checks.
 * Checked on a project tree of its own, so the real files' times are never touched.
 */
describe("web app build: the shared modules count as sources", function () {
  let root: string;
  const hourAgo = () => new Date(Date.now() - 3_600_000);
  const sharedFiles = [
    "packages/protocol/package.json",
    "packages/protocol/src/governance/proposal.ts",
    "packages/protocol/src/governance/rules.ts",
    "packages/protocol/src/credits/typed-data.ts",
    "packages/protocol/src/network-config.ts",
  ];

  before(async function () {
    root = await mkdtemp(path.join(tmpdir(), "web-build-"));
    const files = [
      "apps/web/src/main.tsx",
      "apps/web/public/favicon.svg",
      "apps/web/index.html",
      "apps/web/vite.config.ts",
      "apps/web/wagmi.config.ts",
      "apps/web/package.json",
      "artifacts/contracts/A.sol/A.json",
      ...sharedFiles,
      "apps/web/dist/index.html",
    ];
    for (const file of files) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), "x");
    }
    // Every source an hour old, the build a minute old.
    const directories = ["apps/web/src", "apps/web/public", "artifacts/contracts", "artifacts/contracts/A.sol"];
    directories.push("packages/protocol", "packages/protocol/src", "packages/protocol/src/governance", "packages/protocol/src/credits");
    for (const entry of [...files, ...directories]) {
      await utimes(path.join(root, entry), hourAgo(), hourAgo());
    }
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(path.join(root, "apps/web/dist/index.html"), minuteAgo, minuteAgo);
  });

  after(async function () {
    await rm(root, { recursive: true, force: true });
  });

  it("finds the build stale once any shared module is newer than it", async function () {
    expect(SHARED_SOURCES).to.include.members([
      path.join("packages", "protocol", "src"),
      path.join("packages", "protocol", "package.json"),
    ]);
    for (const file of sharedFiles) {
      expect(await isWebBuildCurrent(root), `before touching ${file}`).to.equal(true);
      await utimes(path.join(root, file), new Date(), new Date());
      expect(await isWebBuildCurrent(root), file).to.equal(false);
      await utimes(path.join(root, file), hourAgo(), hourAgo());
    }
  });
});
