import { Bridge } from "@avn/bridge";
import { expect } from "chai";
import { Contract, NonceManager, Wallet } from "ethers";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { createPublicClient, erc20Abi, http, parseEther, toHex, type Address, type Hash, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

import { decodeOriginData, OrderStatus } from "@avn/protocol/intents";
import { destinationSettlerAbi, l1OriginSettlerAbi, originSettlerAbi } from "../../../apps/web/src/generated/intent-abis.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import type { StackSolver } from "../../../src/devnet/stack-solver.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import { advanceL1Time, SHARED_FINALIZATION_PERIOD, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import {
  connectWallet,
  openConnected,
  readsSettled,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  sendTransaction,
  VIEWPORTS,
  waitForText,
} from "../../helpers/web/browser.ts";
import { logFileEnd, nodeLogLine } from "../../helpers/network.ts";
import { startTestSolver } from "../../helpers/web/solver.ts";
import { TestWallet } from "../../helpers/web/test-wallet.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";

const E18 = 10n ** 18n;

/**
 * The Bridge page's fast withdrawals (ERC-7683 intents, L2 → L1) in a real Chromium, on the shared devnet with the
 * intent layer's solver running as `npm start` runs it (`npm run solver`, its own process, fee 1%): a fresh wallet
 * withdraws 100 primary tokens (Approve, then Withdraw fast) and 1 ETH; each order is filled on L1 by the solver and
 * settled on the L2, the page following it to "Settled" from chain data (found again after a reload), and the
 * recipient's L1 balance up by exactly the quoted output. Then the explorer, as a visitor at phone width, decodes the
 * order's `open` on the L2, its `fill` on L1 and its settlement, in the protocol's words. The L1's clock is an hour
 * ahead of the L2's, as the bridge and explorer files leave the shared devnet: the page's fill deadline must hold on L1.
 * A fast deposit goes the other way: paid on the L2 at once, settled on L1 once the solver's report is relayed.
 */
describe("web app: fast withdrawals and deposits through the intent layer, and their explorer pages, in Chromium", function () {
  this.timeout(600_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let stack: StackFile;
  let solver: StackSolver | undefined;
  let web: RunningWebServer | undefined;
  const contexts: BrowserContext[] = [];
  // The user: a wallet of its own, with nothing on L1 (so its L1 balances are what the solver paid it).
  const key: Hex = generatePrivateKey();
  const user = privateKeyToAccount(key);
  let clients: { l1: ReturnType<typeof createPublicClient>; l2: ReturnType<typeof createPublicClient> };
  let tokenOrder: Hex;

  const l1Address = (name: string) => stack.contracts!.l1![name] as Address;
  const l2Address = (name: string) => stack.contracts!.l2![name] as Address;
  const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    // Whatever ran before: the L1 an hour ahead of the L2, as the challenge periods of the bridge files leave it.
    await advanceL1Time(net.devnet, SHARED_FINALIZATION_PERIOD + 1n);
    ({ solver, stack } = await startTestSolver(net, "web-fast"));
    web = await serveWebApp(stack);
    clients = {
      l1: createPublicClient({ transport: http(net.devnet.l1.rpcUrl) }),
      l2: createPublicClient({ transport: http(net.devnet.l2.rpcUrl) }),
    };
    // L2 ether for its gas and its ETH withdrawal; primary tokens through the standard bridge, as anyone gets them.
    await net.devnet.l2Provider.send("anvil_setBalance", [user.address, toHex(parseEther("10"))]);
    const bridge = await Bridge.connect(net.bridgeNetwork, net.devnet.accounts.deployer.privateKey);
    const deposit = await bridge.depositPrimaryToken(1_000n * E18, { approve: true, recipient: user.address });
    await bridge.waitFor(deposit, "RELAYED", { timeoutMs: 120_000 });
  });

  after(async function () {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
    await browser?.close();
    await web?.close();
    await solver?.process.stop();
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts, "fast-");
  });

  /** The user's wallet, on `chainId` (the L2, where a withdrawal starts, unless told). */
  const wallet = (chainId = net.devnet.l2.chainId) =>
    new TestWallet(
      key,
      [
        { chainId: net.devnet.l1.chainId, rpcUrl: net.devnet.l1.rpcUrl },
        { chainId: net.devnet.l2.chainId, rpcUrl: net.devnet.l2.rpcUrl },
      ],
      chainId,
    );

  const l1TokenBalance = () =>
    clients.l1.readContract({ address: l1Address("PrimaryToken"), abi: erc20Abi, functionName: "balanceOf", args: [user.address] });
  const l2TokenBalance = () =>
    clients.l2.readContract({ address: l2Address("PrimaryToken"), abi: erc20Abi, functionName: "balanceOf", args: [user.address] });

  /** The order's row in the page's list of fast withdrawals. */
  const row = (page: Page, orderId: Hex): Locator => page.locator(`[data-testid="fast-withdrawal"][data-order-id="${orderId}"]`);

  /** Picks a fast withdrawal of `asset` and `amount` in the form, and checks the quote it shows. */
  const fillForm = async (page: Page, asset: "ETH" | "Primary token", amount: string, output: string, fee: string) => {
    await page.getByLabel("Withdraw: L2 → L1").check();
    await page.getByLabel("Fast (intent)").check();
    await page.getByLabel(asset, { exact: true }).check();
    await page.getByLabel("Amount").fill(amount);
    const quote = await waitForText(
      page.getByTestId("fast-quote"),
      new RegExp(`^You receive ${escape(output)} ${asset} on Devnet L1, fee ${escape(fee)} ${asset} \\(1\\.00 %\\), paid by a solver`),
    );
    expect(quote).to.contain("the challenge period (1 h on this network)");
    expect(quote).to.contain("The fee is the deployment's solver's fee.");
  };

  /** Sends Withdraw fast; returns the order's id, as the page names it once the order is opened. */
  const withdrawFast = async (page: Page): Promise<Hex> => {
    await sendTransaction(page, "Withdraw fast");
    const opened = page.getByTestId("fast-opened");
    await opened.waitFor();
    // The form is cleared: the allowance it had is spent, and a second press would open a second order.
    expect(await page.getByLabel("Amount").inputValue()).to.equal("");
    return (await opened.getAttribute("data-order-id")) as Hex;
  };

  const orderStatus = (orderId: Hex) =>
    clients.l2.readContract({ address: l2Address("OriginSettler"), abi: originSettlerAbi, functionName: "orderStatus", args: [orderId] });

  it("withdraws 100 primary tokens fast: approved, filled on L1 by the solver, settled on the L2, and found again after a reload", async function () {
    const config = (await (await fetch(`${web!.url}/config.json`)).json()) as {
      intents?: { minFeeBps: number };
      contracts: { l1: Record<string, string>; l2: Record<string, string> };
    };
    expect(config.intents).to.deep.equal({ minFeeBps: 100 });
    expect([config.contracts.l2.OriginSettler, config.contracts.l1.DestinationSettler]).to.deep.equal([
      l2Address("OriginSettler"),
      l1Address("DestinationSettler"),
    ]);

    const page = await openConnected(browser!, `${web!.url}/bridge`, wallet(), contexts);
    await fillForm(page, "Primary token", "100", "99", "1");
    const [l1Before, l2Before] = [await l1TokenBalance(), await l2TokenBalance()];
    await sendTransaction(page, "Approve");
    tokenOrder = await withdrawFast(page);
    expect(await l2TokenBalance()).to.equal(l2Before - 100n * E18);

    const status = row(page, tokenOrder).getByTestId("fast-withdrawal-status");
    await waitForText(status, /^Settled: paid on L1 \(tx 0x.+\), settled on the L2 \(tx 0x.+\)$/, 180_000);
    expect(await l1TokenBalance()).to.equal(l1Before + 99n * E18);
    expect(await orderStatus(tokenOrder)).to.equal(OrderStatus.settled);
    const [repayTo, filledAt] = await clients.l1.readContract({
      address: l1Address("DestinationSettler"),
      abi: destinationSettlerAbi,
      functionName: "fills",
      args: [tokenOrder],
    });
    expect([repayTo, filledAt > 0n]).to.deep.equal([solver!.account.address, true]);
    // The fill's link goes to its explorer page.
    const fill = await clients.l1.getContractEvents({
      address: l1Address("DestinationSettler"),
      abi: destinationSettlerAbi,
      eventName: "Filled",
      args: { orderId: tokenOrder },
      fromBlock: 0n,
      strict: true,
    });
    expect(await status.getByRole("link").first().getAttribute("href")).to.equal(`/explorer/l1/tx/${fill[0].transactionHash}`);

    await readsSettled(page);
    await screenshot(page, "bridge-fast-settled-desktop");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);

    // From chain data, not this page's memory.
    await page.reload();
    await connectWallet(page);
    await waitForText(row(page, tokenOrder).getByTestId("fast-withdrawal-status"), /^Settled/, 30_000);
    await waitForText(row(page, tokenOrder), /100.*99/);
  });

  it("withdraws 1 ETH fast: the recipient's L1 balance up by exactly the 0.99 ETH quoted, and the order settled", async function () {
    const page = await openConnected(browser!, `${web!.url}/bridge`, wallet(), contexts, VIEWPORTS.phone);
    await fillForm(page, "ETH", "1", "0.99", "0.01");
    const before = await clients.l1.getBalance({ address: user.address });
    const orderId = await withdrawFast(page);
    await waitForText(row(page, orderId).getByTestId("fast-withdrawal-status"), /^Settled: paid on L1/, 180_000);
    // The user spends nothing on L1: the solver's payment is all that moved there.
    expect(await clients.l1.getBalance({ address: user.address })).to.equal(before + parseEther("0.99"));
    expect(await orderStatus(orderId)).to.equal(OrderStatus.settled);
    await readsSettled(page);
    await screenshot(page, "bridge-fast-settled-phone");
    const problems = await seriousAccessibilityViolations(page);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    if (overflow > 1) problems.push(`scrolls sideways by ${overflow} px`);
    expect(problems).to.deep.equal([]);
  });

  it("decodes the order's open on the L2, its fill on L1 and its settlement in the explorer", async function () {
    const context = await browser!.newContext({ viewport: VIEWPORTS.phone });
    contexts.push(context);
    const page = await context.newPage();
    const txOf = async (
      client: ReturnType<typeof createPublicClient>,
      address: Address,
      eventName: "Open" | "Filled" | "Settled",
    ): Promise<Hash> => {
      const abi = eventName === "Filled" ? destinationSettlerAbi : originSettlerAbi;
      const [log] = await client.getContractEvents({ address, abi, eventName, args: { orderId: tokenOrder }, fromBlock: 0n });
      return log.transactionHash;
    };
    const visit = async (chain: "l1" | "l2", hash: Hash, step: "open" | "fill" | "settle") => {
      await page.goto(`${web!.url}/explorer/${chain}/tx/${hash}`);
      await waitForText(page.getByTestId("tx-status"), /^Success$/);
      const order = page.locator(`[data-testid="intent-order"][data-step="${step}"]`);
      await waitForText(order.getByTestId("intent-order-id"), new RegExp(`^${tokenOrder}$`));
      await waitForText(order.getByTestId("intent-now"), /^Settled: paid on L1/);
      return order;
    };

    // The open: the call decoded by name, its event, and the order's terms from its origin data.
    const opened = await visit("l2", await txOf(clients.l2, l2Address("OriginSettler"), "Open"), "open");
    await waitForText(
      page.getByTestId("decoded-input"),
      /^open function open\(\(uint32 fillDeadline, bytes32 orderDataType, bytes orderData\) order\)/,
    );
    await page.locator('[data-testid="tx-event"][data-event="Open"]').waitFor();
    await waitForText(opened.getByTestId("intent-input"), /^100 Primary token$/);
    await waitForText(opened.getByTestId("intent-output"), /^99 Primary token$/);
    await waitForText(opened.getByTestId("intent-recipient"), new RegExp(`^${escape(short(user.address))}`));
    await waitForText(opened.getByTestId("intent-deadline"), /\d{4}/);
    await readsSettled(page);
    await screenshot(page, "explorer-intent-open-phone");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);

    // The fill on L1: by the solver, repaid to it on the L2, paying the user.
    const filled = await visit("l1", await txOf(clients.l1, l1Address("DestinationSettler"), "Filled"), "fill");
    await waitForText(page.getByTestId("decoded-input"), /^fill function fill\(bytes32 orderId, bytes originData, bytes fillerData\)/);
    await page.locator('[data-testid="tx-event"][data-event="Filled"]').waitFor();
    await waitForText(filled.getByTestId("intent-filler"), new RegExp(`^${escape(short(solver!.account.address))}`));
    await waitForText(filled.getByTestId("intent-repay-to"), new RegExp(`^${escape(short(solver!.account.address))}`));
    await waitForText(filled.getByTestId("intent-output"), /^99 Primary token$/);
    await readsSettled(page);
    await screenshot(page, "explorer-intent-fill-phone");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);

    // The settlement on the L2: the escrow paid to the filler on a proof at an L1 block.
    const settled = await visit("l2", await txOf(clients.l2, l2Address("OriginSettler"), "Settled"), "settle");
    await page.locator('[data-testid="tx-event"][data-event="Settled"]').waitFor();
    await waitForText(settled.getByTestId("intent-filler"), new RegExp(`^${escape(short(solver!.account.address))}`));
    await waitForText(settled.getByTestId("intent-input"), /^100 Primary token$/);
  });

  it("deposits 50 primary tokens fast: paid on the L2 by the solver at once, settled on L1 once its report is relayed", async function () {
    // The user's L1 funds: ether for its gas, primary tokens from the deployer.
    await net.devnet.l1Provider.send("anvil_setBalance", [user.address, toHex(parseEther("1"))]);
    const deployer = new NonceManager(new Wallet(net.devnet.accounts.deployer.privateKey, net.devnet.l1Provider));
    const l1Token = new Contract(l1Address("PrimaryToken"), ["function transfer(address,uint256) returns (bool)"], deployer);
    await (await l1Token.getFunction("transfer")(user.address, 100n * E18)).wait();

    // A deposit starts on L1: the wallet is there.
    const page = await openConnected(browser!, `${web!.url}/bridge`, wallet(net.devnet.l1.chainId), contexts);
    await page.getByLabel("Deposit: L1 → L2").check();
    await page.getByLabel("Fast (intent)").check();
    await page.getByLabel("Primary token", { exact: true }).check();
    await page.getByLabel("Amount").fill("50");
    const quote = await waitForText(
      page.getByTestId("fast-quote"),
      /^You receive 49\.5 Primary token on Devnet L2, fee 0\.5 Primary token \(1\.00 %\), paid by a solver within 1–3 L2 blocks/,
    );
    expect(quote).to.contain("the standard deposit pays the whole amount when the L2 takes the deposit in");
    const [l1Before, l2Before] = [await l1TokenBalance(), await l2TokenBalance()];
    await sendTransaction(page, "Approve");
    await sendTransaction(page, "Deposit fast");
    const opened = page.getByTestId("fast-opened");
    await opened.waitFor();
    const orderId = (await opened.getAttribute("data-order-id")) as Hex;
    expect(await l1TokenBalance()).to.equal(l1Before - 50n * E18);

    const status = page.locator(`[data-testid="fast-deposit"][data-order-id="${orderId}"]`).getByTestId("fast-deposit-status");
    const from = await logFileEnd(solver!.logFile);
    await waitForText(status, /^Filled on the L2 \(tx 0x.+\): settling on L1$/, 120_000);
    expect(await l2TokenBalance()).to.equal(l2Before + 49_500_000_000_000_000_000n);
    // The solver's report waits out the shared devnet's challenge period (an hour of L1 time) once it is proven.
    await nodeLogLine(solver!.logFile, from, (entry) => entry.msg === "report proven on L1", 120_000);
    await advanceL1Time(net.devnet, SHARED_FINALIZATION_PERIOD + 1n);
    await waitForText(status, /^Settled: paid on the L2 \(tx 0x.+\), settled on L1 \(tx 0x.+\)$/, 120_000);
    const settled = await clients.l1.readContract({
      address: l1Address("OriginSettler"),
      abi: l1OriginSettlerAbi,
      functionName: "orderStatus",
      args: [orderId],
    });
    expect(settled).to.equal(OrderStatus.settled);
    await readsSettled(page);
    await screenshot(page, "bridge-fast-deposit-settled-desktop");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);

    // The explorer: the open on L1 and the relay that settled it there, in the protocol's words.
    const eventTx = async (eventName: "Open" | "SettledByMessage") => {
      const [log] = await clients.l1.getContractEvents({
        address: l1Address("OriginSettler"),
        abi: l1OriginSettlerAbi,
        eventName,
        args: { orderId },
        fromBlock: 0n,
      });
      return log.transactionHash;
    };
    await page.goto(`${web!.url}/explorer/l1/tx/${await eventTx("Open")}`);
    await waitForText(page.getByTestId("tx-status"), /^Success$/);
    const openedOrder = page.locator('[data-testid="intent-order"][data-step="open"]');
    await waitForText(openedOrder.getByTestId("intent-order-id"), new RegExp(`^${orderId}$`));
    await waitForText(openedOrder.getByTestId("intent-step"), /^Opened on L1: the input escrowed/);
    await waitForText(openedOrder.getByTestId("intent-output"), /^49\.5 Primary token$/);
    await waitForText(openedOrder.getByTestId("intent-now"), /^Settled: paid on the L2/);
    await page.goto(`${web!.url}/explorer/l1/tx/${await eventTx("SettledByMessage")}`);
    const settledOrder = page.locator('[data-testid="intent-order"][data-step="settle"]');
    await waitForText(settledOrder.getByTestId("intent-step"), /^Settled on L1: the escrow paid to the filler, on its report/);
    await waitForText(settledOrder.getByTestId("intent-filler"), new RegExp(`^${escape(short(solver!.account.address))}`));
  });

  it("with the solver stopped, shows an order nobody fills refundable once the L2 is past its deadline and window, and refunds it", async function () {
    // Last: the L2's time is moved forward here, and the solver stays stopped.
    await solver!.process.stop();
    const page = await openConnected(browser!, `${web!.url}/bridge`, wallet(), contexts);
    await fillForm(page, "Primary token", "10", "9.9", "0.1");
    await sendTransaction(page, "Approve");
    const orderId = await withdrawFast(page);
    const status = row(page, orderId).getByTestId("fast-withdrawal-status");
    await waitForText(status, /^Opened: waiting for a solver to fill it on L1 \(deadline in .+\)$/);
    const l2Before = await l2TokenBalance();

    // Past the fill deadline and the settlement window by the L2's clock (`refund` checks block.timestamp).
    const [opened] = await clients.l2.getContractEvents({
      address: l2Address("OriginSettler"),
      abi: originSettlerAbi,
      eventName: "Open",
      args: { orderId },
      fromBlock: 0n,
      strict: true,
    });
    const { fillDeadline } = decodeOriginData(opened.args.resolvedOrder.fillInstructions[0].originData);
    const window = await clients.l2.readContract({
      address: l2Address("OriginSettler"),
      abi: originSettlerAbi,
      functionName: "SETTLEMENT_WINDOW",
    });
    const latest = await clients.l2.getBlock({ blockTag: "latest" });
    await net.devnet.l2Provider.send("evm_increaseTime", [Number(BigInt(fillDeadline) + window + 1n - latest.timestamp)]);
    await net.devnet.l2Provider.send("evm_mine", []);
    await waitForText(status, /^Not filled by its deadline: refundable$/);

    await sendTransaction(row(page, orderId), "Refund", { mayLeave: true });
    await waitForText(status, /^Refunded on the L2 \(tx 0x.+\)$/);
    expect(await orderStatus(orderId)).to.equal(OrderStatus.refunded);
    expect(await l2TokenBalance()).to.equal(l2Before + 10n * E18);
  });
});
