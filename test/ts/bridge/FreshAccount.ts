import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { Bridge } from "@avn/bridge";
import { expect } from "chai";
import { Contract, parseEther, Wallet, ZeroAddress } from "ethers";

import { runCli } from "../../../src/bridge/cli.ts";
import { E18 } from "@avn/protocol/units";
import { ZERO_ADDRESS_BALANCE } from "../../../src/devnet/op-devnet.ts";
import { writeStackFile } from "../../../src/common/stack-file.ts";
import { sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";

const ERC20 = ["function balanceOf(address) view returns (uint256)", "function transfer(address, uint256) returns (bool)"];
const ETH_DEPOSIT = parseEther("0.1");
const TOKEN_DEPOSIT = 10n * E18;

/**
 * What someone does with the OP SDK or the bridge CLI from an account made a minute ago: the SDK's own
 * calls, as its README shows them (no overrides), so that the SDK's estimate without a sender (the zero
 * address) meets the devnet as it meets a public network.
 */
describe("bridge: deposits from a freshly funded account through the OP SDK and the CLI", function () {
  this.timeout(240_000);
  let net: TestDevnet;

  before(async function () {
    net = await sharedTestDevnet();
  });

  const l1Token = () => new Contract(net.deployment!.l1PrimaryToken, ERC20, net.devnet.l1Provider);
  const l2Token = () => new Contract(net.deployment!.l2.PrimaryToken, ERC20, net.devnet.l2Provider);

  /** A new random account with 1 ETH and 100 primary tokens on L1 from the deployer (a development account), nothing on L2. */
  async function freshAccount(): Promise<Wallet> {
    const fresh = Wallet.createRandom();
    const deployer = await net.devnet.l1Provider.getSigner(net.devnet.accounts.deployer.address);
    await (await deployer.sendTransaction({ to: fresh.address, value: parseEther("1") })).wait();
    await (
      await new Contract(net.deployment!.l1PrimaryToken, ERC20, deployer).getFunction("transfer")(fresh.address, 100n * TOKEN_DEPOSIT)
    ).wait();
    expect(await net.devnet.l2Provider.getBalance(fresh.address)).to.equal(0n);
    return new Wallet(fresh.privateKey);
  }

  /** The ETH an L1 transaction cost its sender in gas. */
  async function l1GasCost(hash: string): Promise<bigint> {
    const receipt = await net.devnet.l1Provider.getTransactionReceipt(hash);
    return receipt!.gasUsed * receipt!.gasPrice;
  }

  it("estimates a deposit and a withdrawal of 0.1 ETH with no sender, as a public network's zero address allows", async function () {
    // Through the chains' URLs, as every client sees them, and with no `from`: the node estimates as the zero address.
    const bridge = await Bridge.connect(net.bridgeNetwork, Wallet.createRandom().privateKey);
    expect((await bridge.messenger.estimateGas.depositETH(ETH_DEPOSIT.toString())).toNumber()).to.be.above(21_000);
    expect((await bridge.messenger.estimateGas.withdrawETH(ETH_DEPOSIT.toString())).toNumber()).to.be.above(21_000);
    for (const provider of [net.devnet.l1Provider, net.devnet.l2Provider]) {
      expect(await provider.getBalance(ZeroAddress)).to.be.at.least(ZERO_ADDRESS_BALANCE);
    }
  });

  it("deposits 0.1 ETH twice in a row with the SDK's depositETH, each arriving exactly on L2", async function () {
    const user = await freshAccount();
    const bridge = await Bridge.connect(net.bridgeNetwork, user.privateKey);
    for (const round of [1n, 2n]) {
      const l1Before = await net.devnet.l1Provider.getBalance(user.address);
      const tx = await bridge.messenger.depositETH(ETH_DEPOSIT.toString());
      await tx.wait();
      expect(await net.devnet.l1Provider.getBalance(user.address)).to.equal(l1Before - ETH_DEPOSIT - (await l1GasCost(tx.hash)));
      expect(await bridge.waitFor(tx.hash, "RELAYED", { timeoutMs: 60_000 })).to.equal("RELAYED");
      expect(await net.devnet.l2Provider.getBalance(user.address)).to.equal(round * ETH_DEPOSIT);
    }
  });

  it("deposits the primary token twice in a row with the SDK's approveERC20 and depositERC20, each arriving exactly on L2", async function () {
    const user = await freshAccount();
    const bridge = await Bridge.connect(net.bridgeNetwork, user.privateKey);
    const { l1, l2 } = { l1: net.deployment!.l1PrimaryToken, l2: net.deployment!.l2.PrimaryToken };
    const l1Start = await l1Token().getFunction("balanceOf")(user.address);
    for (const round of [1n, 2n]) {
      await (await bridge.messenger.approveERC20(l1, l2, TOKEN_DEPOSIT.toString())).wait();
      const tx = await bridge.messenger.depositERC20(l1, l2, TOKEN_DEPOSIT.toString());
      await tx.wait();
      expect(await l1Token().getFunction("balanceOf")(user.address)).to.equal(l1Start - round * TOKEN_DEPOSIT);
      expect(await bridge.waitFor(tx.hash, "RELAYED", { timeoutMs: 60_000 })).to.equal("RELAYED");
      expect(await l2Token().getFunction("balanceOf")(user.address)).to.equal(round * TOKEN_DEPOSIT);
    }
    expect(await net.devnet.l2Provider.getBalance(user.address)).to.equal(0n);
  });

  describe("CLI", function () {
    let projectRoot: string;
    let user: Wallet;
    let out: string[];
    let err: string[];
    const cli = (...args: string[]) =>
      runCli([...args, "--account", "fresh"], {
        projectRoot,
        env: {},
        print: (line) => out.push(line),
        printError: (line) => err.push(line),
      });
    /** Runs a deposit command, then `wait` on its transaction; returns the L1 transaction hash. */
    const depositAndWait = async (...args: string[]) => {
      out = [];
      err = [];
      expect(await cli(...args)).to.equal(0, err.join("\n"));
      const hash = /L1 transaction (0x[0-9a-f]{64})/.exec(out.join("\n"))![1];
      expect(await cli("wait", "--tx", hash)).to.equal(0, err.join("\n"));
      expect(out.at(-1)).to.equal("status: RELAYED");
      expect(err).to.deep.equal([]);
      return hash;
    };

    before(async function () {
      user = await freshAccount();
      projectRoot = await mkdtemp(path.join(tmpdir(), "bridge-fresh-"));
      await writeStackFile(path.join(projectRoot, ".devnet", "stack.json"), {
        l1: { chainId: net.devnet.l1.chainId, rpcUrl: net.devnet.l1.rpcUrl },
        l2: { chainId: net.devnet.l2.chainId, rpcUrl: net.devnet.l2.rpcUrl, wsUrl: net.devnet.l2.wsUrl },
        contracts: {
          l1: { ...net.devnet.l1Contracts, PrimaryToken: net.deployment!.l1PrimaryToken },
          l2: { PrimaryToken: net.deployment!.l2.PrimaryToken },
        },
        accounts: { fresh: { address: user.address, privateKey: user.privateKey } },
      });
    });
    after(async function () {
      await rm(projectRoot, { recursive: true, force: true });
    });

    it("deposit-eth 0.1 twice in a row, each arriving exactly on L2", async function () {
      for (const round of [1n, 2n]) {
        const l1Before = await net.devnet.l1Provider.getBalance(user.address);
        const hash = await depositAndWait("deposit-eth", "--amount", "0.1");
        expect(await net.devnet.l1Provider.getBalance(user.address)).to.equal(l1Before - ETH_DEPOSIT - (await l1GasCost(hash)));
        expect(await net.devnet.l2Provider.getBalance(user.address)).to.equal(round * ETH_DEPOSIT);
      }
    });

    it("deposit-token --approve twice in a row, each arriving exactly on L2", async function () {
      const l1Start = await l1Token().getFunction("balanceOf")(user.address);
      for (const round of [1n, 2n]) {
        await depositAndWait("deposit-token", "--amount", "10", "--approve");
        expect(await l1Token().getFunction("balanceOf")(user.address)).to.equal(l1Start - round * TOKEN_DEPOSIT);
        expect(await l2Token().getFunction("balanceOf")(user.address)).to.equal(round * TOKEN_DEPOSIT);
      }
    });
  });
});
