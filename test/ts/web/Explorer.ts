import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createPublicClient, createWalletClient, http, parseEther, toHex, type Hash, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { publicActionsL1, publicActionsL2, walletActionsL1, walletActionsL2 } from "viem/op-stack";

import { appChains } from "../../../apps/web/src/config/chains.ts";
import { verificationRegistryAbi } from "../../../apps/web/src/generated/abis.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import { webConfigFromStack } from "../../../src/web/web-config.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import { advanceL1Time, SHARED_FINALIZATION_PERIOD, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { stackOfTestDevnet } from "../../helpers/stack.ts";
import {
  readsSettled,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  VIEWPORTS,
  waitForText,
} from "../../helpers/web/browser.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";

/**
 * The explorer (`/explorer`) in a real Chromium on the shared devnet, at phone width (axe on each page):
 * a reverted transaction named by its custom error, the search box's every kind of input, a deposit
 * linked to its L2 transaction, and a withdrawal whose state follows prove and finalize. The transactions
 * are sent by the test (viem, as a wallet would), from a fresh account of its own, so the page is looked
 * at as a visitor does: no wallet. The job page, which needs the verification network's answers, is
 * checked in WebApp.ts, where the nodes run.
 */
describe("web app: the explorer in Chromium", function () {
  this.timeout(300_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let web: RunningWebServer;
  let stack: StackFile;
  const contexts: BrowserContext[] = [];
  const key: Hex = generatePrivateKey();
  const account = privateKeyToAccount(key);
  let clients: ReturnType<typeof makeClients>;

  const makeClients = () => {
    const { l1, l2 } = appChains(webConfigFromStack(stack));
    return {
      chains: { l1, l2 },
      l1: createPublicClient({ chain: l1, transport: http(stack.l1!.rpcUrl) }).extend(publicActionsL1()),
      l2: createPublicClient({ chain: l2, transport: http(stack.l2!.rpcUrl) }).extend(publicActionsL2()),
      l1Wallet: createWalletClient({ account, chain: l1, transport: http(stack.l1!.rpcUrl) }).extend(walletActionsL1()),
      l2Wallet: createWalletClient({ account, chain: l2, transport: http(stack.l2!.rpcUrl) }).extend(walletActionsL2()),
    };
  };

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    stack = stackOfTestDevnet(net);
    web = await serveWebApp(stack);
    clients = makeClients();
    // The test's own account, funded on both chains (no other file uses it).
    for (const provider of [net.devnet.l1Provider, net.devnet.l2Provider])
      await provider.send("anvil_setBalance", [account.address, toHex(parseEther("10"))]);
  });

  after(async function () {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
    await browser?.close();
    await web?.close();
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts, "explorer-");
  });

  /** Opens an explorer route at phone width, without a wallet, as a visitor would. */
  const open = async (route: string): Promise<Page> => {
    const context = await browser!.newContext({ viewport: VIEWPORTS.phone });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${web.url}${route}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    return page;
  };

  /** No serious or critical axe violation and no sideways scrolling, once the page's reads have landed. */
  const accessible = async (page: Page, name: string) => {
    await readsSettled(page);
    await screenshot(page, `explorer-${name}-phone`);
    const problems = await seriousAccessibilityViolations(page);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    if (overflow > 1) problems.push(`scrolls sideways by ${overflow} px`);
    expect(problems, name).to.deep.equal([]);
  };

  const search = async (page: Page, text: string) => {
    await page.getByLabel("Search the explorer").fill(text);
    await page.getByRole("button", { name: "Search", exact: true }).click();
  };

  let reverted: Hash;

  it("names a reverted transaction's custom error and decodes its input", async function () {
    // A verification request from an account without collateral: the registry refuses it with its custom
    // error. The gas is given, so nothing simulates the call first and the transaction is mined, failed.
    const registry = stack.contracts!.l2!.VerificationRegistry as Hex;
    reverted = await clients.l2Wallet.writeContract({
      address: registry,
      abi: verificationRegistryAbi,
      functionName: "requestEvmBalance",
      args: [account.address, registry],
      gas: 300_000n,
    });
    const fee = await clients.l2.readContract({ address: registry, abi: verificationRegistryAbi, functionName: "requestFee" });
    const receipt = await clients.l2.waitForTransactionReceipt({ hash: reverted });
    expect(receipt.status).to.equal("reverted");

    const page = await open(`/explorer/l2/tx/${reverted}`);
    await waitForText(page.getByTestId("tx-status"), /^Failed$/);
    await waitForText(
      page.getByTestId("revert-error"),
      new RegExp(`^VerificationRegistry_InsufficientCollateral\\(${account.address}, 0, ${fee}\\)$`),
    );
    await waitForText(page.getByTestId("revert-reason"), /: insufficient collateral/);
    // Addresses are shortened for the phone's width (the full one is the link's title).
    const short = `${account.address.slice(0, 6)}…${account.address.slice(-4)}`;
    await waitForText(page.getByTestId("decoded-input"), new RegExp(`^requestEvmBalance .*owner \\(address\\)${short}`));
    await waitForText(page.getByTestId("l1-fee"), /^None: the receipt carries no L1 data fee \(this devnet charges none\)$/);
    await accessible(page, "tx-reverted");
  });

  it("says which views need the ots_ namespace when the node lacks it, and still decodes the revert by replaying it", async function () {
    // The L2 node as a hosted OP endpoint answers: no Otterscan methods (JSON-RPC "method not found"),
    // over HTTP and over the WebSocket the app falls back to.
    const l2Rpc = stack.l2!.rpcUrl;
    const context = await browser!.newContext({ viewport: VIEWPORTS.phone });
    contexts.push(context);
    const l2Origin = new URL(l2Rpc).origin;
    await context.route(
      (url) => url.origin === l2Origin,
      async (route) => {
        const request = route.request();
        const body = request.method() === "POST" ? (request.postDataJSON() as unknown) : undefined;
        const calls = (Array.isArray(body) ? body : [body]) as Array<{ id: number; method?: string } | undefined>;
        if (!calls.some((call) => call?.method?.startsWith("ots_") === true)) return route.continue();
        const answers = await Promise.all(
          calls.map(async (call) =>
            call!.method!.startsWith("ots_")
              ? { jsonrpc: "2.0", id: call!.id, error: { code: -32601, message: "Method not found" } }
              : await (
                  await fetch(l2Rpc, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call) })
                ).json(),
          ),
        );
        await route.fulfill({
          contentType: "application/json",
          headers: { "access-control-allow-origin": "*" },
          body: JSON.stringify(Array.isArray(body) ? answers : answers[0]),
        });
      },
    );
    // The app falls back from HTTP to the L2's WebSocket: its ots_ requests are refused there too.
    const wsOrigin = new URL(stack.l2!.wsUrl).host;
    await context.routeWebSocket(
      (url) => url.host === wsOrigin,
      (socket) => {
        const server = socket.connectToServer();
        socket.onMessage((message) => {
          const call = JSON.parse(message.toString()) as { id: number; method?: string };
          if (call.method?.startsWith("ots_") === true)
            socket.send(JSON.stringify({ jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "Method not found" } }));
          else server.send(message);
        });
      },
    );
    const page = await context.newPage();
    await page.goto(`${web.url}/explorer/l2/address/${account.address}`);
    await waitForText(page.getByTestId("ots-missing"), /needs the node's Otterscan namespace \(ots_searchTransactionsBefore\)/);
    await waitForText(page.getByTestId("balance-eth"), /^\d/);

    await page.goto(`${web.url}/explorer/l2/tx/${reverted}`);
    await waitForText(page.getByTestId("revert-error"), /^VerificationRegistry_InsufficientCollateral\(/);
    await waitForText(page.getByTestId("revert-reason"), /replayed on the state before its block/);
  });

  it("finds a transaction, a block, an address, a job and a contract by name from the search box", async function () {
    const page = await open("/explorer");
    await page.getByTestId("latest-block-l2").first().waitFor();
    await accessible(page, "home");

    // A transaction hash: its page.
    await search(page, reverted);
    await page.waitForURL(`**/explorer/l2/tx/${reverted}`);
    await waitForText(page.getByTestId("tx-status"), /^Failed$/);

    // A block number both chains have: both listed; the L2's opens its page.
    await search(page, "3");
    const outcome = page.getByTestId("search-outcome");
    await waitForText(outcome, /2 matches/);
    await outcome.getByRole("link", { name: /^Block 3 on Devnet L2$/ }).click();
    await waitForText(page.getByRole("heading", { level: 1 }), /^Block 3 on Devnet L2$/);
    await accessible(page, "block");

    // An address (typed in lower case): both chains' pages; the L2's shows its balances and history.
    await search(page, account.address.toLowerCase());
    await waitForText(outcome, /2 matches/);
    await outcome.getByRole("link", { name: new RegExp(`on Devnet L2$`) }).click();
    await waitForText(page.getByTestId("address"), new RegExp(`^${account.address}$`));
    await waitForText(page.getByTestId("balance-eth"), /^9\.99/);
    await page
      .locator(`[data-testid="history-row"]`)
      .filter({ hasText: reverted.slice(0, 6) })
      .first()
      .waitFor();
    await accessible(page, "address");

    // A known contract's name: its page, with its name and roles.
    await search(page, "VerificationRegistry");
    await waitForText(page.getByRole("heading", { level: 1 }), /^VerificationRegistry on Devnet L2$/);
    await waitForText(page.getByTestId("address"), new RegExp(`^${stack.contracts!.l2!.VerificationRegistry}$`));

    // A job number: its page (no job is requested on this devnet without the nodes: it says so).
    await search(page, "job:999999");
    await page.waitForURL("**/explorer/job/999999");
    await waitForText(page.getByTestId("job-status"), /No such job/);

    // Something else: said plainly.
    await search(page, "nonsense!");
    await waitForText(outcome, /is not a block number, a transaction hash, an address/);
  });

  it("links a deposit to its L2 transaction", async function () {
    const args = await clients.l2.buildDepositTransaction({ mint: parseEther("0.5"), to: account.address });
    const hash = await clients.l1Wallet.depositTransaction({ ...args, targetChain: clients.chains.l2 } as never);
    await clients.l1.waitForTransactionReceipt({ hash });

    const page = await open(`/explorer/l1/tx/${hash}`);
    await waitForText(page.getByTestId("tx-status"), /^Success$/);
    const deposit = page.getByTestId("deposit-l2");
    await waitForText(deposit.getByTestId("deposit-state"), /^arrived in L2 block \d+$/, 60_000);
    await accessible(page, "deposit");
    await deposit.getByRole("link").click();
    await waitForText(page.getByRole("heading", { level: 1 }), /^Transaction on Devnet L2$/);
    await waitForText(page.getByTestId("tx-status"), /^Success$/);
    await waitForText(page.locator("dd").filter({ hasText: /^Deposit from L1/ }), /0x7e/);
  });

  it("follows a withdrawal from its output root through prove and finalize", async function () {
    const args = await clients.l1.buildInitiateWithdrawal({ to: account.address, value: parseEther("0.25") });
    const hash = await clients.l2Wallet.initiateWithdrawal(args);
    const receipt = await clients.l2.waitForTransactionReceipt({ hash });

    const page = await open(`/explorer/l2/tx/${hash}`);
    const state = page.getByTestId("withdrawal-state");
    // The devnet's proposer posts an output root for it within seconds.
    await waitForText(state, /^(Waiting for its output root on L1|Ready to prove)$/);
    await accessible(page, "withdrawal");
    await waitForText(state, /^Ready to prove$/, 60_000);

    const { output, withdrawal } = await clients.l1.waitToProve({ receipt, targetChain: clients.chains.l2 as never });
    const proof = await clients.l2.buildProveWithdrawal({ output, withdrawal });
    const proved = await clients.l1Wallet.proveWithdrawal({ ...proof, targetChain: clients.chains.l2 } as never);
    await clients.l1.waitForTransactionReceipt({ hash: proved });
    await waitForText(state, /^Proven: in the challenge period, .+ left$/);

    await advanceL1Time(net.devnet, SHARED_FINALIZATION_PERIOD + 1n);
    await waitForText(state, /^Ready to finalize$/);
    const finalized = await clients.l1Wallet.finalizeWithdrawal({ withdrawal, targetChain: clients.chains.l2 } as never);
    await clients.l1.waitForTransactionReceipt({ hash: finalized });
    await waitForText(state, /^Finalized$/);
  });
});
