import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { Bridge, BridgeError, type MessageStatusName } from "@avn/bridge";
import { expect } from "chai";
import { AbiCoder, Contract, parseEther, ZeroAddress } from "ethers";

import { runCli } from "../../../src/bridge/cli.ts";
import { describeError } from "../../../src/common/describe-error.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { writeStackFile } from "../../../src/common/stack-file.ts";
import { advanceL1Time, SHARED_FINALIZATION_PERIOD, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { E18 } from "@avn/protocol/units";

const ERC20 = [
  "function balanceOf(address) view returns (uint256)",
  "function totalSupply() view returns (uint256)",
  "function transfer(address, uint256) returns (bool)",
];
// Long enough that finalization needs L1 time to be moved, as on the live chain (7 days there).
const FINALIZATION_PERIOD = SHARED_FINALIZATION_PERIOD;

async function rejectionOf(promise: Promise<unknown>): Promise<BridgeError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, "expected a BridgeError").to.be.instanceOf(BridgeError);
  return error as BridgeError;
}

describe("bridge: deposits and withdrawals through the OP standard bridge on the devnet", function () {
  this.timeout(240_000);
  let net: TestDevnet;
  let bridge: Bridge;
  const user = devAccount(6);

  before(async function () {
    net = await sharedTestDevnet();
    // The user gets primary tokens on L1 from the deployer, who holds the supply.
    const deployer = await net.devnet.l1Provider.getSigner(net.devnet.accounts.deployer.address);
    const token = new Contract(net.deployment!.l1PrimaryToken, ERC20, deployer);
    await (await token.getFunction("transfer")(user.address, 10_000n * E18)).wait();
    bridge = await Bridge.connect(net.bridgeNetwork, user.privateKey);
  });

  const l1Token = () => new Contract(net.deployment!.l1PrimaryToken, ERC20, net.devnet.l1Provider);
  const l2Token = () => new Contract(net.deployment!.l2.PrimaryToken, ERC20, net.devnet.l2Provider);

  it("deposits ETH: the amount appears on L2 and the message goes UNCONFIRMED → RELAYED", async function () {
    const before = await net.devnet.l2Provider.getBalance(user.address);
    const hash = await bridge.depositEth(parseEther("2"));
    const seen: MessageStatusName[] = [];
    expect(await bridge.waitFor(hash, "RELAYED", { onStatus: (status) => seen.push(status), timeoutMs: 30_000 })).to.equal("RELAYED");
    expect(seen.at(-1)).to.equal("RELAYED");
    expect(seen.every((status) => status === "UNCONFIRMED_L1_TO_L2_MESSAGE" || status === "RELAYED")).to.equal(true);
    expect(await net.devnet.l2Provider.getBalance(user.address)).to.equal(before + parseEther("2"));
    expect(await bridge.status(hash)).to.deep.equal({ direction: "L1_TO_L2", status: "RELAYED" });
  });

  it("refuses a token deposit beyond the allowance without spending gas, and makes it with approval", async function () {
    const nonce = await net.devnet.l1Provider.getTransactionCount(user.address);
    const error = await rejectionOf(bridge.depositPrimaryToken(500n * E18));
    expect(error.code).to.equal("ALLOWANCE_TOO_LOW");
    expect(error.message).to.match(/may spend 0 base units .* less than 500000000000000000000/);
    expect(await net.devnet.l1Provider.getTransactionCount(user.address)).to.equal(nonce);

    const l1Before = await l1Token().getFunction("balanceOf")(user.address);
    const hash = await bridge.depositPrimaryToken(500n * E18, { approve: true });
    await bridge.waitFor(hash, "RELAYED", { timeoutMs: 30_000 });
    expect(await l2Token().getFunction("balanceOf")(user.address)).to.equal(500n * E18);
    expect(await l1Token().getFunction("balanceOf")(user.address)).to.equal(l1Before - 500n * E18);
    // The L1 bridge holds what L2 minted (other tests on the shared devnet bridge tokens too).
    expect(await l1Token().getFunction("balanceOf")(net.devnet.l1Contracts.L1StandardBridge)).to.equal(
      await l2Token().getFunction("totalSupply")(),
    );
  });

  it("refuses a deposit larger than the balance", async function () {
    expect((await rejectionOf(bridge.depositPrimaryToken(1_000_000n * E18, { approve: true }))).code).to.equal("INSUFFICIENT_BALANCE");
  });

  for (const asset of ["ETH", "primary token"] as const) {
    it(`withdraws ${asset} to L1 through prove and finalize, with every status observed and a clear error for each wrong step`, async function () {
      const amount = asset === "ETH" ? parseEther("0.5") : 200n * E18;
      const l1Balance = () =>
        asset === "ETH" ? net.devnet.l1Provider.getBalance(user.address) : l1Token().getFunction("balanceOf")(user.address);

      // With the proposer paused, no output covers the withdrawal yet.
      await net.devnet.proposer.stop();
      const hash = asset === "ETH" ? await bridge.withdrawEth(amount) : await bridge.withdrawPrimaryToken(amount);
      expect(await bridge.status(hash)).to.deep.equal({ direction: "L2_TO_L1", status: "STATE_ROOT_NOT_PUBLISHED" });
      expect((await rejectionOf(bridge.prove(hash))).code).to.equal("NOT_PROVABLE_YET");
      expect((await rejectionOf(bridge.finalize(hash))).code).to.equal("NOT_PROVEN");

      // The proposer restarts once the wait has seen the first status: started before, it can publish the
      // output before the first poll on a loaded machine, and the first status would go unobserved.
      const seen: MessageStatusName[] = [];
      await bridge.waitFor(hash, "READY_TO_PROVE", {
        onStatus: (status) => {
          seen.push(status);
          if (seen.length === 1) net.devnet.proposer.start();
        },
        timeoutMs: 30_000,
      });
      expect(seen).to.deep.equal(["STATE_ROOT_NOT_PUBLISHED", "READY_TO_PROVE"]);

      await bridge.prove(hash);
      expect((await bridge.status(hash)).status).to.equal("IN_CHALLENGE_PERIOD");
      expect((await rejectionOf(bridge.prove(hash))).code).to.equal("ALREADY_PROVEN");
      const early = await rejectionOf(bridge.finalize(hash));
      expect(early.code).to.equal("FINALIZATION_PERIOD_NOT_OVER");
      // The time given is the proof's L1 time plus the finalization period.
      const provenAt = (await net.devnet.l1Provider.getBlock("latest"))!.timestamp;
      const finalizableAt = Date.parse(/can be finalized from (\S+) \(L1 time\)/.exec(early.message)![1]) / 1000;
      expect(finalizableAt - provenAt).to.be.within(Number(FINALIZATION_PERIOD) - 5, Number(FINALIZATION_PERIOD));

      await advanceL1Time(net.devnet, FINALIZATION_PERIOD + 1n);
      expect((await bridge.status(hash)).status).to.equal("READY_FOR_RELAY");
      const before = await l1Balance();
      const finalizeTx = await bridge.finalize(hash);
      expect((await bridge.status(hash)).status).to.equal("RELAYED");
      if (asset === "ETH") {
        const receipt = await net.devnet.l1Provider.getTransactionReceipt(finalizeTx);
        expect(await l1Balance()).to.equal(before + amount - receipt!.gasUsed * receipt!.gasPrice);
      } else {
        expect(await l1Balance()).to.equal(before + amount);
      }
      expect((await rejectionOf(bridge.finalize(hash))).code).to.equal("ALREADY_FINALIZED");
    });
  }

  it("refuses a network whose RPC serves another chain", async function () {
    const wrong = { ...net.bridgeNetwork, name: "testnet", l1: { ...net.bridgeNetwork.l1, chainId: 11155111 } };
    const error = await rejectionOf(Bridge.connect(wrong, user.privateKey));
    expect(error.code).to.equal("WRONG_NETWORK");
    expect(error.message).to.equal("The L1 RPC serves chain 900, but testnet expects chain 11155111");
    const wrongL2 = { ...net.bridgeNetwork, l2: { ...net.bridgeNetwork.l2, chainId: 123420000418 } };
    expect((await rejectionOf(Bridge.connect(wrongL2, user.privateKey))).message).to.equal(
      "The L2 RPC serves chain 901, but devnet expects chain 123420000418",
    );
  });

  it("refuses a fault-proof portal without its dispute game factory, and never prints an RPC URL on unexpected failures", async function () {
    // A JSON-RPC endpoint behind a secret path, like a hosted RPC's API key: it answers the chain id and
    // the portal's version, and fails everything else.
    let portalVersion = "3.10.0";
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        const port = (server.address() as AddressInfo).port;
        const answers: Record<string, string> = {
          eth_chainId: request.url?.includes("l1") ? "0x384" : "0x385",
          eth_call: AbiCoder.defaultAbiCoder().encode(["string"], [portalVersion]),
        };
        if (answers[method] === undefined) {
          response.writeHead(500).end(`upstream http://127.0.0.1:${port}/SECRET-KEY failed`);
          return;
        }
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: answers[method] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const fake = {
      ...net.bridgeNetwork,
      l1: { chainId: 900, rpcUrl: `${base}/l1/SECRET-KEY` },
      l2: { chainId: 901, rpcUrl: `${base}/l2/SECRET-KEY` },
    };
    try {
      const error = await rejectionOf(Bridge.connect(fake, user.privateKey));
      expect(error.code).to.equal("CONFIGURATION");
      expect(error.message).to.equal(
        "The OptimismPortal of devnet is version 3.10.0 (fault proofs): add the chain's DisputeGameFactory address to its configuration",
      );

      portalVersion = "2.8.0";
      const projectRoot = await mkdtemp(path.join(tmpdir(), "bridge-fake-"));
      await writeStackFile(path.join(projectRoot, ".devnet", "stack.json"), {
        l1: fake.l1,
        l2: { ...fake.l2, wsUrl: "ws://unused" },
        contracts: { l1: { ...net.devnet.l1Contracts } },
        accounts: { user },
      });
      const lines: string[] = [];
      const exitCode = await runCli(["deposit-eth", "--amount", "1", "--account", "user"], {
        projectRoot,
        env: {},
        print: (line) => lines.push(line),
        printError: (line) => lines.push(line),
      });
      await rm(projectRoot, { recursive: true, force: true });
      expect(exitCode).to.equal(2);
      expect(lines.at(-1)).to.match(/^error: /);
      expect(lines.at(-1)).to.equal("error: bad response (SERVER_ERROR)"); // ethers' short reason, not its URL-laden message
      // Errors without a short reason keep their first line, with every URL replaced.
      const bare = new Error("request to https://rpc.example/v3/SECRET-KEY failed\nat https://rpc.example/v3/SECRET-KEY");
      expect(describeError(bare)).to.equal("request to <url> failed");
      expect(lines.join("\n")).to.not.include("SECRET-KEY");
      expect(lines.join("\n")).to.not.include(user.privateKey.slice(2));
    } finally {
      server.close();
    }
  });

  it("refuses to prove a deposit or a transaction with no message", async function () {
    const deposit = await bridge.depositEth(1n);
    expect((await rejectionOf(bridge.prove(deposit))).code).to.equal("NOT_A_WITHDRAWAL");
    const signer = await net.devnet.l1Provider.getSigner(user.address);
    const plain = await (await signer.sendTransaction({ to: devAccount(7).address, value: 1n })).wait();
    expect((await rejectionOf(bridge.status(plain!.hash))).code).to.equal("MESSAGE_NOT_FOUND");
  });

  describe("CLI", function () {
    let projectRoot: string;
    let out: string[];
    let err: string[];
    const cli = (...args: string[]) =>
      runCli(args, { projectRoot, env: {}, print: (line) => out.push(line), printError: (line) => err.push(line) });

    before(async function () {
      projectRoot = await mkdtemp(path.join(tmpdir(), "bridge-cli-"));
      await writeStackFile(path.join(projectRoot, ".devnet", "stack.json"), {
        l1: { chainId: 900, rpcUrl: net.devnet.l1.rpcUrl },
        l2: { chainId: 901, rpcUrl: net.devnet.l2.rpcUrl, wsUrl: net.devnet.l2.wsUrl },
        contracts: {
          l1: { ...net.devnet.l1Contracts, PrimaryToken: net.deployment!.l1PrimaryToken },
          l2: { PrimaryToken: net.deployment!.l2.PrimaryToken },
        },
        accounts: { user },
      });
    });
    beforeEach(function () {
      out = [];
      err = [];
    });
    after(async function () {
      await rm(projectRoot, { recursive: true, force: true });
    });

    it("deposits, then follows the message to RELAYED, printing each status; never prints the key", async function () {
      expect(await cli("deposit-eth", "--amount", "0.25", "--account", "user")).to.equal(0);
      const hash = /L1 transaction (0x[0-9a-f]{64})/.exec(out.join("\n"))![1];
      expect(await cli("wait", "--tx", hash, "--account", "user")).to.equal(0);
      expect(out.at(-1)).to.equal("status: RELAYED");
      expect(err).to.deep.equal([]);
      expect(out.join("\n")).to.not.include(user.privateKey.slice(2));
    });

    it("exits 1 with the error's code for bad input, an unapproved amount and an unknown account", async function () {
      expect(await cli("deposit-eth", "--amount", "lots", "--account", "user")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[INVALID_ARGUMENT\]: --amount "lots" is not a decimal number/);
      expect(await cli("deposit-token", "--amount", "1", "--account", "user", "--to", "0x123")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[INVALID_ARGUMENT\]: --to "0x123" is not an address/);
      expect(await cli("deposit-token", "--amount", "1000", "--account", "user")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[ALLOWANCE_TOO_LOW\]/);
      expect(await cli("status", "--tx", "0x" + "ab".repeat(32), "--account", "user")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[MESSAGE_NOT_FOUND\]/);
      expect(await cli("status", "--tx", "0x" + "ab".repeat(32), "--account", "nobody")).to.equal(1);
      expect(err.at(-1)).to.equal('error [CONFIGURATION]: The stack file has no account "nobody" (it has: user)');
      for (const amount of ["0", "-1", "0.0000000000000000001"]) {
        expect(await cli("deposit-eth", "--amount", amount, "--account", "user")).to.equal(1);
        expect(err.at(-1)).to.match(/^error \[INVALID_ARGUMENT\]: .*--amount/);
      }
      expect(await cli("deposit-eth", "--amount", "1", "--to", ZeroAddress, "--account", "user")).to.equal(1);
      expect(err.at(-1)).to.equal("error [INVALID_ARGUMENT]: --to is the zero address: the funds would be lost");
      expect(await cli("teleport")).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[INVALID_ARGUMENT\]: Unknown command "teleport"/);
    });

    it("on testnet, names the missing configuration instead of guessing", async function () {
      expect(await cli("deposit-eth", "--amount", "1", "--network", "testnet")).to.equal(1);
      expect(err.at(-1)).to.match(
        /^error \[CONFIGURATION\]: The OP chain's L1 contract addresses are not configured: write them to deploy\/op-chains\/l2Testnet\.json/,
      );
      // The committed example has placeholders only: it is refused too.
      const example = path.resolve(import.meta.dirname, "..", "..", "..", "deploy", "op-chains", "example.json");
      const withExample = (env: NodeJS.ProcessEnv) =>
        runCli(["deposit-eth", "--amount", "1", "--network", "testnet"], {
          projectRoot,
          env,
          print: () => undefined,
          printError: (line) => err.push(line),
        });
      expect(await withExample({ OP_CHAIN_CONFIG: example })).to.equal(1);
      expect(err.at(-1)).to.match(/^error \[CONFIGURATION\]: .*example\.json has no address for AddressManager$/);
      // With the chain's addresses known, the next missing piece is named: the RPC URL, then the key.
      const stackAsChain = path.join(projectRoot, "op-chain.json");
      await writeFile(stackAsChain, JSON.stringify({ contracts: net.devnet.l1Contracts }));
      expect(await withExample({ OP_CHAIN_CONFIG: stackAsChain })).to.equal(1);
      expect(err.at(-1)).to.equal("error [CONFIGURATION]: Set L1_TESTNET_RPC_URL to the network's JSON-RPC URL");
      const urls = { L1_TESTNET_RPC_URL: net.devnet.l1.rpcUrl, L2_TESTNET_RPC_URL: net.devnet.l2.rpcUrl };
      expect(await withExample({ OP_CHAIN_CONFIG: stackAsChain, ...urls })).to.equal(1);
      expect(err.at(-1)).to.equal("error [CONFIGURATION]: Set BRIDGE_PRIVATE_KEY to the key of the account to bridge with");
      // And with a key, the devnet's RPCs are recognised as the wrong chains.
      expect(await withExample({ OP_CHAIN_CONFIG: stackAsChain, ...urls, BRIDGE_PRIVATE_KEY: user.privateKey })).to.equal(1);
      expect(err.at(-1)).to.equal("error [WRONG_NETWORK]: The L1 RPC serves chain 900, but testnet expects chain 11155111");
      expect(err.join("\n")).to.not.include(user.privateKey.slice(2));
      expect(err.join("\n")).to.not.include(net.devnet.l1.rpcUrl);
    });
  });
});
