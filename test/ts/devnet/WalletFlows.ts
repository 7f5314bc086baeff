import { Bridge } from "@avn/bridge";
import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet, type JsonRpcApiProviderOptions } from "ethers";
import { createWalletClient, defineChain, http, publicActions, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

import { sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { E18 } from "@avn/protocol/units";

const TRANSFERS = 100;
/**
 * The L2 mines on a timer (the shared devnet's: every second) and the front answers a submission no sooner
 * than 300 ms, so one account's send-wait-send takes a while per transfer: each chain's 100 transfers per
 * library run as 4 accounts' 25 back-to-back, side by side. What is checked is each transfer (a nonce read
 * after its receipt), and the failure it guards against strikes a transfer at random (about one in fifty
 * at 2 s blocks without the front, more often at faster blocks: docs/devnet-and-bridge.md), so 100
 * transfers catch it as often either way.
 */
const ACCOUNTS = 4;
// Clients poll for receipts this often: a setting of how soon they look, not of how they count nonces.
const POLL_MS = 250;

/**
 * What a user writes against the devnet: one account, a transfer, wait for its receipt, the next
 * transfer; each library with its default nonce handling and no retry. After each receipt the chain's
 * own reads (not a library's) must already count the transaction, at `latest` and at `pending`.
 */
describe("devnet: a wallet's send-wait-send through ethers v6, viem and the OP SDK", function () {
  this.timeout(600_000);
  let net: TestDevnet;

  before(async function () {
    net = await sharedTestDevnet();
  });

  async function freshFundedKey(chain: "l1" | "l2"): Promise<Hex> {
    const key = generatePrivateKey();
    const provider = chain === "l1" ? net.devnet.l1Provider : net.devnet.l2Provider;
    await provider.send("anvil_setBalance", [privateKeyToAccount(key).address, "0x" + (100n * E18).toString(16)]);
    return key;
  }

  /** The sender's transaction count as the chain reports it, at `latest` and `pending`, bypassing any client cache. */
  async function chainNonces(rpcUrl: string, address: string): Promise<[number, number]> {
    const read = async (tag: string) => {
      const response = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionCount", params: [address, tag] }),
      });
      return Number(((await response.json()) as { result: string }).result);
    };
    return [await read("latest"), await read("pending")];
  }

  async function ethersLoop(rpcUrl: string, key: Hex, transfers: number): Promise<string[]> {
    // A default provider, as a user makes one (its 250 ms request cache included).
    const options: JsonRpcApiProviderOptions = { pollingInterval: POLL_MS };
    const provider = new JsonRpcProvider(rpcUrl, undefined, options);
    const wallet = new Wallet(key, provider);
    const failures: string[] = [];
    try {
      for (let i = 0; i < transfers; i++) {
        try {
          const receipt = await (await wallet.sendTransaction({ to: Wallet.createRandom().address, value: 1n })).wait();
          const seen = await chainNonces(rpcUrl, wallet.address);
          if (receipt?.status !== 1 || seen[0] !== i + 1 || seen[1] !== i + 1)
            failures.push(`#${i}: status ${receipt?.status}, counts ${seen.join("/")}`);
        } catch (error) {
          failures.push(`#${i}: ${(error as Error).message.slice(0, 120)}`);
        }
      }
    } finally {
      provider.destroy();
    }
    return failures;
  }

  async function viemLoop(chainId: number, rpcUrl: string, key: Hex, transfers: number): Promise<string[]> {
    const chain = defineChain({
      id: chainId,
      name: `devnet ${chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const client = createWalletClient({
      account: privateKeyToAccount(key),
      chain,
      transport: http(rpcUrl),
      pollingInterval: POLL_MS,
    }).extend(publicActions);
    const failures: string[] = [];
    for (let i = 0; i < transfers; i++) {
      try {
        const hash = await client.sendTransaction({ to: privateKeyToAccount(generatePrivateKey()).address, value: 1n });
        const receipt = await client.waitForTransactionReceipt({ hash });
        const seen = await chainNonces(rpcUrl, client.account.address);
        if (receipt.status !== "success" || seen[0] !== i + 1 || seen[1] !== i + 1)
          failures.push(`#${i}: ${receipt.status}, counts ${seen.join("/")}`);
      } catch (error) {
        failures.push(`#${i}: ${(error as Error).message.split("\n")[0].slice(0, 120)}`);
      }
    }
    return failures;
  }

  it(`sends ${TRANSFERS} send-wait-send transfers on each chain through ethers and through viem (from ${ACCOUNTS} accounts side by side), each read back at once, without a failure`, async function () {
    // All loops run side by side, each from an account of its own.
    const loops = (["l1", "l2"] as const).flatMap((chain) => {
      const { chainId, rpcUrl } = net.devnet[chain];
      const transfers = TRANSFERS / ACCOUNTS;
      return Array.from({ length: ACCOUNTS }, (_, account) => [
        { name: `${chain} ethers v6 #${account}`, run: async () => ethersLoop(rpcUrl, await freshFundedKey(chain), transfers) },
        { name: `${chain} viem #${account}`, run: async () => viemLoop(chainId, rpcUrl, await freshFundedKey(chain), transfers) },
      ]).flat();
    });
    const failures = await Promise.all(loops.map((loop) => loop.run()));
    for (const [i, loop] of loops.entries()) expect(failures[i], loop.name).to.deep.equal([]);
  });

  it("approves then deposits the primary token through the OP SDK, twice in a row", async function () {
    const key = await freshFundedKey("l1");
    const user = new Wallet(key);
    const deployer = await net.devnet.l1Provider.getSigner(net.devnet.accounts.deployer.address);
    const erc20 = ["function balanceOf(address) view returns (uint256)", "function transfer(address, uint256) returns (bool)"];
    await (await new Contract(net.deployment!.l1PrimaryToken, erc20, deployer).getFunction("transfer")(user.address, 100n * E18)).wait();

    const bridge = await Bridge.connect(net.bridgeNetwork, key);
    const l2Token = new Contract(net.deployment!.l2.PrimaryToken, erc20, net.devnet.l2Provider);
    for (const round of [1n, 2n]) {
      // Each deposit spends the allowance its approval granted, so each round approves again.
      const hash = await bridge.depositPrimaryToken(10n * E18, { approve: true });
      expect(await bridge.waitFor(hash, "RELAYED", { timeoutMs: 60_000 })).to.equal("RELAYED");
      expect(await l2Token.getFunction("balanceOf")(user.address)).to.equal(round * 10n * E18);
    }
  });
});
