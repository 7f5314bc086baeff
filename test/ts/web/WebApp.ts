import { expect } from "chai";
import { Contract, JsonRpcProvider, NonceManager, Wallet, getAddress } from "ethers";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { Hex } from "viem";

import { epochQos, type LicenseQos } from "@avn/protocol/qos";
import { epochPayouts } from "@avn/protocol/rewards";

import { formatAmount, formatBps, formatChallenges, formatRate } from "../../../apps/web/src/lib/format.ts";
import {
  NodeLicense__factory,
  NodeRegistry__factory,
  PrimaryToken__factory,
  RewardPools__factory,
  StakedToken__factory,
  VerificationRegistry__factory,
} from "../../../typechain-types/index.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import { NETWORK_ACCOUNTS, type VerificationNetwork } from "../../../src/devnet/verification-network.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import type { NetworkNodes } from "../../../src/api/network/network-service.ts";
import { EpochSettlements } from "../../../src/chains/evm/epoch-settlement.ts";
import { QosIndex } from "../../../src/chains/evm/qos-index.ts";
import { advanceL1Time, eventually, SHARED_FINALIZATION_PERIOD, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import {
  connectWallet,
  openConnected as openConnectedPage,
  readsSettled,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  sendTransaction,
  VIEWPORTS,
  waitForText,
} from "../../helpers/web/browser.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";
import { startTestVerificationNetwork } from "../../helpers/network.ts";
import { TestWallet } from "../../helpers/web/test-wallet.ts";
import { E18 } from "@avn/protocol/units";

const PAGES = ["delegate", "bridge", "stake", "licenses", "network", "governance", "credits"] as const;

/**
 * The web app in a real Chromium against the shared devnet with the verification network running (three
 * circuit nodes), through a test wallet that announces itself by EIP-6963 and signs with the token
 * holder's development key: the app's real wallet code runs, and every effect is checked on-chain.
 */
describe("web app: delegation, licenses, staking, bridge and the dashboard in Chromium", function () {
  this.timeout(900_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let network: VerificationNetwork;
  let web: RunningWebServer;
  let stack: StackFile;
  let l1: JsonRpcProvider;
  let l2: JsonRpcProvider;
  const contexts: BrowserContext[] = [];
  const holder = devAccount(NETWORK_ACCOUNTS.tokenHolder);

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    // Heartbeats every 3 s: a stopped node is the only one left not live once time moves past the window.
    ({ network, stack } = await startTestVerificationNetwork(net, "web-network", {
      HEARTBEAT_INTERVAL_SECONDS: "3",
      POLL_INTERVAL_MS: "500",
    }));
    web = await serveWebApp(stack);
    l1 = devnetProvider(net.devnet.l1.rpcUrl, net.devnet.l1.chainId);
    l2 = devnetProvider(net.devnet.l2.rpcUrl, net.devnet.l2.chainId);
  });

  after(async function () {
    await browser?.close();
    await web?.close();
    await network?.stop();
    l1?.destroy();
    l2?.destroy();
  });

  // A failed test leaves a screenshot of each page it had open, to see what the user would have seen;
  // then each test's browser contexts are closed.
  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts);
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
  });

  const l2Address = (name: string) => stack.contracts!.l2![name];
  const l1Address = (name: string) => stack.contracts!.l1![name];
  const chainsOf = () => [
    { chainId: net.devnet.l1.chainId, rpcUrl: net.devnet.l1.rpcUrl },
    { chainId: net.devnet.l2.chainId, rpcUrl: net.devnet.l2.rpcUrl },
  ];

  /** A wallet holding the token holder's key that knows both devnet chains and starts on `chainId`. */
  const holderWallet = (chainId = net.devnet.l2.chainId) => new TestWallet(holder.privateKey as Hex, chainsOf(), chainId);

  /**
   * The owner of the first node's license: the node votes with that license (the licenses it is configured
   * with), so it earns rewards, where the holder's license delegated to the same burner is asked and never answers.
   */
  const nodeOwner = devAccount(NETWORK_ACCOUNTS.nodeOwners[0]);
  const nodeOwnerWallet = () => new TestWallet(nodeOwner.privateKey as Hex, chainsOf(), net.devnet.l2.chainId);

  /** Opens `route` in a new browser context with `wallet` injected, and connects it through the page. */
  const openConnected = (
    route: string,
    wallet: TestWallet,
    viewport: { width: number; height: number } = VIEWPORTS.desktop,
  ): Promise<Page> => openConnectedPage(browser!, `${web.url}${route}`, wallet, contexts, viewport);

  /** The node row of `operator` on the Network page, and whether its status cell reads exactly `status`. */
  const nodeStatus = (page: Page, operator: string, status: "Live" | "Not live") =>
    eventually(
      () => page.locator(`[data-testid="node-row"][data-operator="${operator}"]`).getByRole("cell", { name: status, exact: true }).count(),
      (count) => count === 1,
      30_000,
    );

  /** Opens a job about the first EVM demo holding as the consumer and waits until `page` (the Network page) shows it fulfilled. */
  const openJobSeenFulfilled = async (page: Page) => {
    const consumer = new NonceManager(new Wallet(devAccount(NETWORK_ACCOUNTS.consumer).privateKey, l2));
    const registry = VerificationRegistry__factory.connect(l2Address("VerificationRegistry"), consumer);
    const demo = network.stack.demo!.evm[0];
    const jobId = await registry.nextJobId();
    await (await registry.requestEvmBalance(demo.user_address, demo.contract_address)).wait();
    await waitForText(page.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`), /fulfilled/i, 60_000);
    return { registry, jobId };
  };

  const ownedLicenses = async (owner: string) => {
    const license = NodeLicense__factory.connect(l2Address("NodeLicense"), l2);
    const count = await license.balanceOf(owner);
    const ids: bigint[] = [];
    for (let index = 0n; index < count; index++) ids.push(await license.tokenOfOwnerByIndex(owner, index));
    return ids.sort((a, b) => (a < b ? -1 : 1));
  };

  /** The Network page's "would earn now" cell of `licenseId`, in the holder's scores. */
  const wouldEarn = (page: Page, licenseId: bigint) =>
    page.locator(`[data-testid="your-score-row"][data-license-id="${licenseId}"] [data-testid="would-earn"]`);

  /**
   * Funds `epoch`'s reward pool with `amount` of the holder's L2 primary tokens, through the account that holds
   * the pools' REWARDS_FUNDER_ROLE on the devnet (the deployer, `rewardsFunder` of deploy/parameters/devnetL2.json).
   */
  const fundRewards = async (epoch: number, amount: bigint) => {
    const funder = new NonceManager(new Wallet(net.devnet.accounts.deployer.privateKey, l2));
    const pools = RewardPools__factory.connect(l2Address("RewardPools"), funder);
    expect(await pools.hasRole(await pools.REWARDS_FUNDER_ROLE(), net.devnet.accounts.deployer.address)).to.equal(true);
    const fromHolder = PrimaryToken__factory.connect(l2Address("PrimaryToken"), new NonceManager(new Wallet(holder.privateKey, l2)));
    await (await fromHolder.transfer(net.devnet.accounts.deployer.address, amount)).wait();
    await (await PrimaryToken__factory.connect(l2Address("PrimaryToken"), funder).approve(l2Address("RewardPools"), amount)).wait();
    await (await pools.fundEpochRewards(epoch, amount)).wait();
  };

  /** Moves the L2's time to `timestamp` (unix seconds; later than its latest block's) and mines a block there. */
  const advanceL2To = async (timestamp: bigint) => {
    const latest = await l2.getBlock("latest");
    await l2.send("evm_increaseTime", [Math.max(0, Number(timestamp) - latest!.timestamp)]);
    await l2.send("evm_mine", []);
  };

  it("connects through EIP-6963 and, on the wrong network, switches the wallet to the L2 with the add-network request", async function () {
    // A wallet that knows only the L1, as a fresh MetaMask knows only the networks it ships with.
    const wallet = new TestWallet(holder.privateKey as Hex, [chainsOf()[0]], net.devnet.l1.chainId);
    const page = await openConnected("/delegate", wallet);
    const notice = page.getByTestId("wrong-network");
    await waitForText(notice, /This page acts on Devnet L2 \(chain 901\)/);
    await notice.getByRole("button", { name: "Switch to Devnet L2" }).click();
    await notice.waitFor({ state: "detached" });
    expect(wallet.currentChainId).to.equal(net.devnet.l2.chainId);
    expect(wallet.addChainRequests).to.have.length(1);
    expect(Number(wallet.addChainRequests[0].chainId)).to.equal(net.devnet.l2.chainId);
    expect(wallet.addChainRequests[0].rpcUrls).to.deep.equal([net.devnet.l2.rpcUrl]);
  });

  it("buys three licenses at the shown price", async function () {
    const license = NodeLicense__factory.connect(l2Address("NodeLicense"), l2);
    const token = PrimaryToken__factory.connect(l2Address("PrimaryToken"), l2);
    const page = await openConnected("/licenses", holderWallet());
    await page.getByLabel("Quantity").fill("3");
    const quote = await license.quote(3n);
    const shown = await waitForText(
      page.getByTestId("license-total"),
      new RegExp(`^${formatAmount(quote).replace(/[.,]/g, "\\$&")} primary tokens$`),
    );
    expect(shown).to.equal(`${formatAmount(quote)} primary tokens`);
    const [licensesBefore, tokensBefore] = [await license.balanceOf(holder.address), await token.balanceOf(holder.address)];
    await sendTransaction(page, "Approve");
    await sendTransaction(page, "Buy");
    expect(await license.balanceOf(holder.address)).to.equal(licensesBefore + 3n);
    expect(await token.balanceOf(holder.address)).to.equal(tokensBefore - quote);
    // The page lists them once bought.
    const ids = await ownedLicenses(holder.address);
    await waitForText(page.getByText(`License #${ids[ids.length - 1]}`), /License/);
  });

  it("delegates two licenses to a burner in one transaction, then undelegates them", async function () {
    const registry = NodeRegistry__factory.connect(l2Address("NodeRegistry"), l2);
    const [first, second] = await ownedLicenses(holder.address);
    const burner = Wallet.createRandom().address;
    const page = await openConnected("/delegate", holderWallet());
    for (const id of [first, second]) await page.getByLabel(`License ${id}`, { exact: true }).check();
    await page.getByRole("button", { name: "Delegate", exact: true }).click();
    const input = page.getByLabel("Burner wallet address");
    // A typo in a checksummed address is caught; the lower-case form is accepted and shown checksummed.
    const typo =
      burner.slice(0, 2) +
      [...burner.slice(2)]
        .map((char) => (/[a-f]/.test(char) ? char.toUpperCase() : /[A-F]/.test(char) ? char.toLowerCase() : char))
        .join("");
    if (typo !== burner.toLowerCase() && typo !== burner.toUpperCase()) {
      await input.fill(typo);
      await waitForText(page.getByRole("alert").filter({ hasText: "checksum" }), /checksum does not match/);
    }
    await input.fill(burner.toLowerCase());
    await page.getByTestId("no-heartbeat-warning").waitFor();
    const preview = await waitForText(page.getByTestId("signing-preview"), new RegExp(burner));
    expect(preview).to.contain(`delegate([${first}, ${second}], ${getAddress(burner)})`);
    await sendTransaction(page, "Delegate");
    expect(await registry.operatorOf(first)).to.equal(burner);
    expect(await registry.operatorOf(second)).to.equal(burner);
    await waitForText(page.locator(`[data-license-id="${first}"] [data-testid="operator"]`), new RegExp(burner));

    await page.getByRole("button", { name: "Close" }).click();
    await sendTransaction(page, "Undelegate");
    expect(await registry.operatorOf(first)).to.equal("0x0000000000000000000000000000000000000000");
    expect(await registry.operatorOf(second)).to.equal("0x0000000000000000000000000000000000000000");
  });

  it("shows a rejected signature and a reverting transaction as readable messages and stays usable", async function () {
    const registry = NodeRegistry__factory.connect(l2Address("NodeRegistry"), l2);
    const [, kept, given] = await ownedLicenses(holder.address);
    const wallet = holderWallet();
    const page = await openConnected("/delegate", wallet);
    await page.getByLabel(`License ${given}`, { exact: true }).check();
    await page.getByRole("button", { name: "Delegate", exact: true }).click();
    const burner = network.stack.nodes![0].burner;
    await page.getByLabel("Burner wallet address").fill(burner);

    wallet.rejectNext();
    const rejected = await sendTransaction(page, "Delegate", { expectFailure: true });
    expect(rejected).to.equal("Failed: You rejected the request in your wallet.");

    // The license changes hands behind the page's back: the contract refuses, and the page says why.
    const owner = new NonceManager(new Wallet(holder.privateKey, l2));
    const license = new Contract(l2Address("NodeLicense"), ["function transferFrom(address,address,uint256)"], owner);
    await (await license.getFunction("transferFrom")(holder.address, devAccount(6).address, given)).wait();
    const reverted = await sendTransaction(page, "Delegate", { expectFailure: true });
    expect(reverted).to.contain("not license owner");
    expect(reverted).to.contain(`NodeRegistry_NotLicenseOwner: ${given}, ${holder.address}`);
    // Decoded, not a raw selector or revert data (addresses, 40 hex digits, are fine).
    expect(reverted).not.to.match(/0x[0-9a-f]{8}(?![0-9a-f])|signature:/i);

    // Still usable: delegate the other license to the same burner.
    await page.getByLabel(`License ${given}`, { exact: true }).uncheck();
    await page.getByRole("button", { name: "Close" }).click();
    await page.getByLabel(`License ${kept}`, { exact: true }).check();
    await page.getByRole("button", { name: "Delegate", exact: true }).click();
    await page.getByLabel("Burner wallet address").fill(burner);
    await sendTransaction(page, "Delegate");
    expect(await registry.operatorOf(kept)).to.equal(getAddress(burner));
  });

  it("deposits ETH and primary tokens from L1 that arrive on L2", async function () {
    const l2Token = PrimaryToken__factory.connect(l2Address("PrimaryToken"), l2);
    const page = await openConnected("/bridge", holderWallet(net.devnet.l1.chainId));
    await page.getByLabel("Deposit: L1 → L2").check();

    const ethBefore = await l2.getBalance(holder.address);
    await page.getByLabel("ETH", { exact: true }).check();
    await page.getByLabel("Amount").fill("1.5");
    await sendTransaction(page, "Deposit");
    await waitForText(page.getByRole("status").filter({ hasText: "Arrived on L2" }), /Arrived on L2/, 60_000);
    expect(await l2.getBalance(holder.address)).to.equal(ethBefore + (15n * E18) / 10n);

    const tokensBefore = await l2Token.balanceOf(holder.address);
    await page.getByLabel("Primary token", { exact: true }).check();
    await page.getByLabel("Amount").fill("250");
    await sendTransaction(page, "Approve");
    await sendTransaction(page, "Deposit");
    await eventually(
      () => l2Token.balanceOf(holder.address),
      (balance) => balance === tokensBefore + 250n * E18,
      60_000,
    );
    await waitForText(page.getByRole("status").filter({ hasText: "Arrived on L2" }), /Arrived on L2/, 60_000);
  });

  it("deposits ETH twice in a row from a brand-new account, each arriving exactly on L2", async function () {
    // A fresh account, funded on L1 only: what a newcomer's wallet holds (no history, no L2 balance).
    const fresh = Wallet.createRandom();
    const funder = new NonceManager(new Wallet(devAccount(NETWORK_ACCOUNTS.tokenHolder).privateKey, l1));
    await (await funder.sendTransaction({ to: fresh.address, value: 2n * E18 })).wait();
    const page = await openConnected("/bridge", new TestWallet(fresh.privateKey as Hex, chainsOf(), net.devnet.l1.chainId));
    await page.getByLabel("Deposit: L1 → L2").check();
    await page.getByLabel("ETH", { exact: true }).check();
    for (const arrived of [E18 / 10n, (2n * E18) / 10n]) {
      await page.getByLabel("Amount").fill("0.1");
      await sendTransaction(page, "Deposit");
      await eventually(
        () => l2.getBalance(fresh.address),
        (balance) => balance === arrived,
        60_000,
      );
    }
    expect(await l2.getBalance(fresh.address)).to.equal((2n * E18) / 10n);
  });

  it("withdraws primary tokens to L1 through prove and finalize, found again after a reload and on a second device", async function () {
    const l1Token = PrimaryToken__factory.connect(l1Address("PrimaryToken"), l1);
    const page = await openConnected("/bridge", holderWallet(net.devnet.l2.chainId));
    await page.getByLabel("Withdraw: L2 → L1").check();
    await page.getByLabel("Primary token", { exact: true }).check();
    await page.getByLabel("Amount").fill("40");
    await sendTransaction(page, "Withdraw");

    // From chain data, not this page's memory: a reload and another browser find it.
    await page.reload();
    await connectWallet(page);
    const row = page.getByTestId("withdrawal").first();
    await waitForText(row, /40/, 30_000);
    const elsewhere = await openConnected("/bridge", holderWallet(net.devnet.l1.chainId), VIEWPORTS.phone);
    await waitForText(elsewhere.getByTestId("withdrawal").first(), /40/, 30_000);

    await waitForText(row, /Ready to prove/, 120_000);
    await row
      .getByRole("button", { name: "Switch to Devnet L1" })
      .click()
      .catch(() => undefined);
    await sendTransaction(row, "Prove", { timeoutMs: 120_000, mayLeave: true });
    await waitForText(row, /challenge period/, 30_000);
    await advanceL1Time(net.devnet, SHARED_FINALIZATION_PERIOD + 1n);
    await waitForText(row, /Ready to finalize/, 60_000);
    const before = await l1Token.balanceOf(holder.address);
    await sendTransaction(row, "Finalize", { timeoutMs: 120_000, mayLeave: true });
    await eventually(
      () => l1Token.balanceOf(holder.address),
      (balance) => balance === before + 40n * E18,
      30_000,
    );
    await waitForText(row, /Done/, 30_000);
  });

  it("stakes, requests redemptions at two unlock periods with the contract's preview, completes one and cancels the other", async function () {
    const staked = StakedToken__factory.connect(l2Address("StakedToken"), l2);
    const token = PrimaryToken__factory.connect(l2Address("PrimaryToken"), l2);
    const page = await openConnected("/stake", holderWallet());
    const stakedBefore = await staked.balanceOf(holder.address);
    await page.getByLabel("Amount to stake").fill("300");
    await sendTransaction(page, "Approve");
    await sendTransaction(page, "Stake");
    expect(await staked.balanceOf(holder.address)).to.equal(stakedBefore + 300n * E18);

    const [minPeriod, maxPeriod] = [await staked.minUnlockPeriod(), await staked.maxUnlockPeriod()];
    const periods = [minPeriod, maxPeriod];
    for (const period of periods) {
      const amount = 100n * E18;
      await page.getByLabel("Amount to redeem").fill("100");
      await page.getByLabel("Unlock period (days)").fill(String(Number(period) / 86_400));
      const expected = await staked.previewRedemption(amount, period);
      const rate = await staked.redemptionRate(period);
      const shown = await waitForText(
        page.getByTestId("redemption-preview"),
        new RegExp(`pays ${formatAmount(expected).replace(/[.,]/g, "\\$&")} primary`),
      );
      expect(shown).to.contain(formatRate(rate));
      await sendTransaction(page, "Request redemption");
    }
    const rows = page.getByTestId("redemption");
    await eventually(
      () => rows.count(),
      (count) => count === 2,
    );
    expect(await staked.pendingRedemptionCount(holder.address)).to.equal(2n);

    // Time passes on L2 past the shorter unlock.
    await l2.send("evm_increaseTime", [Number(minPeriod) + 1]);
    await l2.send("evm_mine", []);
    const primaryBefore = await token.balanceOf(holder.address);
    const [shorter, longer] = [...(await staked.pendingRedemptionIds(holder.address, 0n, 10n))].sort((a, b) => (a < b ? -1 : 1));
    const { primaryAmount } = await staked.getRedemption(shorter);
    const rowOf = (id: bigint) => page.locator(`[data-testid="redemption"][data-redemption-id="${id}"]`);
    await eventually(
      async () => rowOf(shorter).getByRole("button", { name: "Complete" }).isEnabled(),
      (enabled) => enabled,
      30_000,
    );
    const stakedNow = await staked.balanceOf(holder.address);
    // A completed or cancelled redemption leaves the list; the page says what happened above it.
    await sendTransaction(rowOf(shorter), "Complete", { mayLeave: true });
    await waitForText(page.getByRole("status").filter({ hasText: `Redemption #${shorter} completed` }), /completed/);
    expect(await token.balanceOf(holder.address)).to.equal(primaryBefore + primaryAmount);
    await eventually(
      () => rows.count(),
      (count) => count === 1,
    );
    await sendTransaction(rowOf(longer), "Cancel", { mayLeave: true });
    await waitForText(page.getByRole("status").filter({ hasText: `Redemption #${longer} cancelled` }), /cancelled/);
    expect(await staked.balanceOf(holder.address)).to.equal(stakedNow + 100n * E18);
    expect(await staked.pendingRedemptionCount(holder.address)).to.equal(0n);
  });

  it("shows a job's votes, result and fee split in the explorer once the nodes answer it, at phone width", async function () {
    const consumer = new NonceManager(new Wallet(devAccount(NETWORK_ACCOUNTS.consumer).privateKey, l2));
    const registry = VerificationRegistry__factory.connect(l2Address("VerificationRegistry"), consumer);
    const demo = network.stack.demo!.evm[0];
    const jobId = await registry.nextJobId();
    await (await registry.requestEvmBalance(demo.user_address, demo.contract_address)).wait();
    const fee = (await registry.getJob(jobId)).fee;

    // A visitor's page: no wallet. It follows the open job until the nodes' votes finalize it.
    const context = await browser!.newContext({ viewport: VIEWPORTS.phone });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${web.url}/explorer/job/${jobId}`);
    await waitForText(page.getByTestId("job-status"), /^Finalized$/, 60_000);
    const result = await registry.getResult(jobId);
    expect(await page.getByTestId("job-balance").textContent()).to.equal(result.balance.toLocaleString("en-US"));
    // Each accepted vote with its license and whether it agreed; the fee split among the agreeing ones.
    const votes = page.getByTestId("job-vote");
    const quorum = Number((await registry.getJob(jobId)).quorum);
    expect(await votes.count()).to.be.at.least(quorum);
    for (const cell of await page.getByTestId("vote-agreed").all()) expect(await cell.textContent()).to.equal("Agreed");
    const split = await waitForText(page.getByTestId("fee-split"), /agreeing license/);
    expect(split).to.contain(`${formatAmount(fee, 18, 18)} staked tokens among the ${await votes.count()} agreeing licenses`);
    await waitForText(page.getByTestId("job-callback"), /^None: the requester is an account, not a contract\.$/);
    await readsSettled(page);
    await screenshot(page, "explorer-job-phone");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);
  });

  it("shows the three nodes live, a new job as it is answered, and a node as not live once its heartbeats stop", async function () {
    const page = await openConnected("/network", holderWallet());
    const rows = page.getByTestId("node-row");
    const burners = network.stack.nodes!.map((node) => getAddress(node.burner));
    for (const burner of burners) await nodeStatus(page, burner, "Live");
    expect(await rows.count()).to.be.at.least(3);

    // A job opened on-chain appears over the WebSocket and turns fulfilled when the nodes answer it.
    await openJobSeenFulfilled(page);

    // Node 3 stops; once the liveness window passes, only it is not live (the others beat every 3 s).
    await network.nodes[2].stop();
    // A heartbeat it sent just before stopping may still wait for the next L2 block: mined after the jump
    // in time below, it would make the node live again for a whole window. Jump once it is mined.
    await eventually(
      async () => (await l2.getTransactionCount(burners[2], "pending")) - (await l2.getTransactionCount(burners[2], "latest")),
      (pending) => pending === 0,
      30_000,
    );
    const window = await NodeRegistry__factory.connect(l2Address("NodeRegistry"), l2).livenessWindow();
    await l2.send("evm_increaseTime", [Number(window) + 1]);
    await l2.send("evm_mine", []);
    await nodeStatus(page, burners[2], "Not live");
    for (const burner of burners.slice(0, 2)) await nodeStatus(page, burner, "Live");
  });

  it("shows each license's quality of service as the API computes it, this epoch and the ones before, and the holder's scores", async function () {
    const page = await openConnected("/network", holderWallet());
    const nodeLicenses = network.stack.nodes!.map((node) => BigInt(node.licenseIds[0]));
    const holderLicenses = await ownedLicenses(holder.address);
    const licenses = [...new Set([...nodeLicenses, ...holderLicenses])];

    // The self-reported capacity is gone from the nodes; the figures are a table of their own, by license.
    const nodesTable = page.getByRole("table", { name: "Nodes", exact: true });
    const qosTable = page.getByRole("table", { name: /^Quality of service per license, epoch \d+/ });
    await qosTable.waitFor({ timeout: 60_000 });
    expect(await nodesTable.getByRole("columnheader").allTextContents()).to.deep.equal([
      "Operator",
      "Licenses",
      "Status",
      "Last heartbeat",
    ]);
    expect(await qosTable.getByRole("columnheader").allTextContents()).to.deep.equal([
      "License",
      "Operator",
      "Score",
      "Uptime",
      "Participation",
      "Accuracy",
      "Median vote delay (blocks)",
      "Jobs asked",
      "Votes",
      "Agreed / disagreed",
      "Challenges answered / asked",
      "Attestations recorded",
    ]);

    // A job in this epoch, so that the figures count one.
    const { registry, jobId } = await openJobSeenFulfilled(page);
    const [fulfilled] = await registry.queryFilter(registry.filters.VerificationFulfilled(jobId));

    // What the page shows of a license, cell by cell, and what it would show of `figures`, formatted by its helpers.
    const CELLS = [
      "qos-score",
      "qos-uptime",
      "qos-participation",
      "qos-accuracy",
      "qos-delay",
      "qos-asked",
      "qos-votes",
      "qos-agreement",
      "qos-challenges",
      "qos-attestations",
    ];
    const shownOf = async (licenseId: bigint) => {
      const row = page.locator(`[data-testid="qos-row"][data-license-id="${licenseId}"]`);
      if ((await row.count()) === 0) return undefined;
      return Promise.all(CELLS.map(async (cell) => (await row.getByTestId(cell).textContent()) ?? ""));
    };
    type Figures = Pick<
      LicenseQos,
      | "scoreBps"
      | "uptimeBps"
      | "participationBps"
      | "accuracyBps"
      | "medianVoteDelayBlocks"
      | "jobsAsked"
      | "votes"
      | "agreed"
      | "disagreed"
      | "challengeJobsAsked"
      | "challengeJobsAnswered"
      | "challengeMedianVoteDelayBlocks"
      | "attestations"
    >;
    const formatted = (figures: Figures | undefined) =>
      figures === undefined
        ? undefined
        : [
            formatBps(figures.scoreBps),
            formatBps(figures.uptimeBps),
            formatBps(figures.participationBps),
            formatBps(figures.accuracyBps),
            figures.medianVoteDelayBlocks.toLocaleString("en-US"),
            figures.jobsAsked.toLocaleString("en-US"),
            figures.votes.toLocaleString("en-US"),
            `${figures.agreed} / ${figures.disagreed}`,
            formatChallenges(figures.challengeJobsAnswered, figures.challengeJobsAsked, figures.challengeMedianVoteDelayBlocks),
            figures.attestations.toLocaleString("en-US"),
          ];
    const yourScore = (licenseId: bigint, epoch: number) =>
      page
        .locator(`[data-testid="your-score-row"][data-license-id="${licenseId}"] [data-testid="your-score"][data-epoch="${epoch}"]`)
        .textContent();
    const epochSelector = page.getByLabel("Epoch", { exact: true });
    /** Where the page differs from `figuresOf` in `epoch`, one line each: none once it shows the same. */
    const mismatches = async (epoch: number, figuresOf: (licenseId: bigint) => Figures | undefined) => {
      const problems: string[] = [];
      const selected = await epochSelector.inputValue();
      if (selected !== String(epoch)) problems.push(`epoch ${selected} selected, not ${epoch}`);
      for (const licenseId of licenses) {
        const [shown, expected] = [await shownOf(licenseId), formatted(figuresOf(licenseId))];
        if (JSON.stringify(shown) !== JSON.stringify(expected))
          problems.push(`license ${licenseId}: page ${JSON.stringify(shown)}, expected ${JSON.stringify(expected)}`);
      }
      // The holder's own licenses, in its scores.
      for (const licenseId of holderLicenses) {
        const figures = figuresOf(licenseId);
        const [shown, expected] = [
          await yourScore(licenseId, epoch),
          figures === undefined ? "Never delegated" : formatBps(figures.scoreBps),
        ];
        if (shown !== expected) problems.push(`your license ${licenseId}: page "${shown}", expected "${expected}"`);
      }
      return problems;
    };

    // This epoch: the page's figures are the API's (GET /api/network/nodes), once the API has read the job's result.
    const apiNodes = async () => {
      const response = await fetch(`${stack.api!.baseUrl}/api/network/nodes`, { headers: { authorization: stack.api!.apiKey } });
      expect(response.status).to.equal(200);
      return (await response.json()) as NetworkNodes;
    };
    let current = 0;
    await eventually(
      async () => {
        const api = await apiNodes();
        current = api.epoch;
        const byLicense = new Map(api.nodes.map((node) => [BigInt(node.licenseId), node]));
        const problems = await mismatches(api.epoch, (licenseId) => byLicense.get(licenseId));
        if (api.block < fulfilled.blockNumber)
          problems.push(`the API read block ${api.block}, the job finalized in ${fulfilled.blockNumber}`);
        // A running node's license was asked the job: the figures compared are not those of an idle epoch.
        if ((byLicense.get(nodeLicenses[0])?.jobsAsked ?? 0) === 0) problems.push(`license ${nodeLicenses[0]} was asked no job`);
        return problems;
      },
      (problems) => problems.length === 0,
      60_000,
    );
    expect(await qosTable.locator("caption").textContent()).to.equal(`Quality of service per license, epoch ${current} (current)`);
    // What each license would earn were the epoch to end now, with the epoch funded: its pool split by every
    // license's weight in the API's figures (`epochPayouts`), as the page formats amounts. The holder's licenses
    // (none that a node votes with: nothing), and, on a page of its own, the license of the first node's owner,
    // which earns: the amounts compared are not all zero.
    // The local stack funded the first epochs already (1,000 each): this adds to what the pool holds.
    const rewardPools = RewardPools__factory.connect(l2Address("RewardPools"), l2);
    const pool = (await rewardPools.settlementOf(current)).pool + 900n * E18;
    await fundRewards(current, 900n * E18);
    const ownerPage = await openConnected("/network", nodeOwnerWallet());
    const ownerLicenses = await ownedLicenses(nodeOwner.address);
    await eventually(
      async () => {
        const [settlement, api] = await Promise.all([rewardPools.settlementOf(current), apiNodes()]);
        const problems = settlement.pool === pool ? [] : [`epoch ${current}'s pool is ${settlement.pool}, not ${pool}`];
        if (api.epoch !== current) problems.push(`the API counts epoch ${api.epoch}, not ${current}`);
        const { payouts } = epochPayouts(
          api.nodes.map((node) => ({ ...node, licenseId: BigInt(node.licenseId) })),
          settlement.pool,
        );
        const amountOf = (licenseId: bigint) => payouts.find((payout) => payout.licenseId === licenseId)?.amount ?? 0n;
        if (!ownerLicenses.some((licenseId) => amountOf(licenseId) > 0n)) problems.push("the node owner's license would earn nothing");
        for (const [shownOn, licenseIds] of [
          [page, holderLicenses],
          [ownerPage, ownerLicenses],
        ] as const) {
          for (const licenseId of licenseIds) {
            const [shown, expected] = [await wouldEarn(shownOn, licenseId).textContent(), formatAmount(amountOf(licenseId))];
            if (shown !== expected)
              problems.push(`license ${licenseId} would earn "${shown}" on the page, ${expected} by the API's figures`);
          }
        }
        return problems;
      },
      (problems) => problems.length === 0,
      60_000,
    );
    await ownerPage.context().close();

    // The epoch ends: the job is now in a previous one. Each previous epoch the selector offers shows what
    // epochQos computes from the chain's events (read by the API's index, not the page's code) for that epoch.
    const verification = VerificationRegistry__factory.connect(l2Address("VerificationRegistry"), l2);
    const [epochsStart, epochDuration, livenessWindow] = (
      await Promise.all([
        verification.EPOCHS_START(),
        verification.EPOCH_DURATION(),
        NodeRegistry__factory.connect(l2Address("NodeRegistry"), l2).livenessWindow(),
      ])
    ).map(Number);
    await l2.send("evm_increaseTime", [epochDuration]);
    await l2.send("evm_mine", []);
    await eventually(
      () => epochSelector.inputValue(),
      (value) => value === String(current + 1),
      30_000,
    );
    const offered = await Promise.all(
      (await epochSelector.locator("option").all()).map(async (option) => Number(await option.getAttribute("value"))),
    );
    expect(offered).to.deep.equal([current + 1, current, current - 1, current - 2].filter((epoch) => epoch >= 0));
    const index = new QosIndex(
      { request: (method, params) => l2.send(method, params) },
      {
        nodeRegistry: l2Address("NodeRegistry"),
        verificationRegistry: l2Address("VerificationRegistry"),
      },
    );
    await index.update();
    for (const epoch of offered.slice(1)) {
      const start = epochsStart + epoch * epochDuration;
      const figures = epochQos(index.events, { epoch, start, end: start + epochDuration, now: start + epochDuration, livenessWindow });
      if (epoch === current) expect(figures.get(nodeLicenses[0])?.jobsAsked).to.be.at.least(1);
      await epochSelector.selectOption(String(epoch));
      await eventually(
        () => mismatches(epoch, (licenseId) => figures.get(licenseId)),
        (problems) => problems.length === 0,
        30_000,
      );
      expect(await qosTable.locator("caption").textContent()).to.equal(`Quality of service per license, epoch ${epoch}`);
    }
  });

  it("settles an ended epoch's rewards, and claims a node owner's payout with the proof of the root the nodes voted", async function () {
    const page = await openConnected("/network", nodeOwnerWallet());
    const rewardPools = RewardPools__factory.connect(l2Address("RewardPools"), l2);
    const staked = StakedToken__factory.connect(l2Address("StakedToken"), l2);
    const ownerLicenses = await ownedLicenses(nodeOwner.address);
    // An epoch with a pool and a job the nodes answer, the first one with the owner's license.
    const epoch = await rewardPools.currentEpoch();
    await fundRewards(Number(epoch), 600n * E18);
    await openJobSeenFulfilled(page);

    // Its settlement opens: the nodes vote the root of its payouts, and a quorum of their licenses accepts it.
    await advanceL2To((await rewardPools.settlementOf(epoch)).settlementOpensAt);
    const accepted = await eventually(
      () => rewardPools.settlementOf(epoch),
      (state) => state.accepted,
      120_000,
    );
    // That root is the tree of the registries' events up to the settlement's boundary, as the nodes' code reads them.
    const { tree } = await new EpochSettlements({ request: (method, params) => l2.send(method, params) }, l2Address("RewardPools")).rewards(
      Number(epoch),
    );
    expect(accepted.root).to.equal(tree.root);
    const earned = ownerLicenses.filter((licenseId) => tree.proofOf(licenseId) !== undefined);
    expect(earned.length, "the node owner's license earned nothing in the epoch").to.be.above(0);

    // The page computed the same payouts; the claim waits for the dispute period.
    const row = page.locator(`[data-testid="reward-row"][data-epoch="${epoch}"]`);
    const payoutOf = (licenseId: bigint) => row.locator(`[data-testid="reward-payout"][data-license-id="${licenseId}"]`);
    const payoutText = (licenseId: bigint, claimed: boolean) => {
      const payout = tree.proofOf(licenseId);
      const amount = payout === undefined ? "nothing earned" : `${formatAmount(payout.amount)} (${claimed ? "claimed" : "not claimed"})`;
      return new RegExp(`^#${licenseId}: ${amount.replace(/[.()]/g, "\\$&")}$`);
    };
    await waitForText(row.getByTestId("reward-status"), /^Root accepted; claims open \d/, 60_000);
    for (const licenseId of ownerLicenses) await waitForText(payoutOf(licenseId), payoutText(licenseId, false));
    expect(await row.getByRole("button", { name: "Claim rewards", exact: true }).isDisabled()).to.equal(true);
    await waitForText(row.locator(".tx .hint"), /^Claims open .+, after the dispute period\.$/);

    // Then the owner claims: each license's payout, staked for its owner.
    await advanceL2To(accepted.claimsOpenAt);
    await waitForText(row.getByTestId("reward-status"), /^Root accepted; claims open$/);
    const before = await staked.balanceOf(nodeOwner.address);
    await sendTransaction(row, "Claim rewards");
    for (const licenseId of earned) expect(await rewardPools.isClaimed(epoch, licenseId)).to.equal(true);
    const paid = earned.reduce((sum, licenseId) => sum + tree.proofOf(licenseId)!.amount, 0n);
    expect(await staked.balanceOf(nodeOwner.address)).to.equal(before + paid);
    for (const licenseId of earned) await waitForText(payoutOf(licenseId), payoutText(licenseId, true));
    await waitForText(row.locator(".tx .hint"), /^Your licenses' rewards of this epoch are claimed\.$/);
  });

  it("renders every page at desktop and phone width with no serious accessibility violation and no sideways scrolling", async function () {
    const problems: string[] = [];
    // The two widths side by side, each page after the other within one width: a page waits mostly for
    // its reads, which the other width's page overlaps.
    const checkWidth = async ([width, viewport]: [string, (typeof VIEWPORTS)[keyof typeof VIEWPORTS]]) => {
      for (const name of PAGES) {
        const page = await openConnected(`/${name}`, holderWallet(), viewport);
        await page.getByRole("heading", { level: 1 }).waitFor();
        // Let the first chain reads land, so the screenshot and axe see the page as a user does.
        await readsSettled(page);
        await screenshot(page, `${name}-${width}`);
        for (const violation of await seriousAccessibilityViolations(page)) problems.push(`${name} at ${width} width: ${violation}`);
        // A source string: the test runner's TypeScript loader may wrap functions in helpers the page lacks.
        const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
        if (overflow > 1) problems.push(`${name} at ${width} width scrolls sideways by ${overflow} px`);
        await page.context().close();
      }
    };
    await Promise.all(Object.entries(VIEWPORTS).map(checkWidth));
    expect(problems.sort()).to.deep.equal([]);
  });
});
