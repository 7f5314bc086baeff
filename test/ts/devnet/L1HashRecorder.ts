import { expect } from "chai";
import { Interface, toQuantity, type JsonRpcProvider } from "ethers";

import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { L1BlockHashes__factory } from "../../../typechain-types/index.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { startL1HashRecorder, type L1HashRecorder } from "../../../src/devnet/l1-hash-recorder.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { opArtifact } from "../../../src/op/artifacts.ts";

/** The only account Bedrock's L1Block takes its values from. */
const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
const l1Block = new Interface(opArtifact("L1Block").abi);

/**
 * The local stack's keeper of `L1BlockHashes` (src/devnet/l1-hash-recorder.ts), on an anvil that stands in for the
 * L2: Bedrock's L1Block at its predeploy address, set by its depositor as op-node would.
 */
describe("devnet: the L1 block hash recorder", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let hashes: string;

  /** L1Block learns "L1 block" `number` (any hash and time will do: the recorder copies what L1Block holds). */
  const setL1Block = async (number: number) => {
    await provider.send("eth_sendTransaction", [
      {
        from: DEPOSITOR,
        to: L2_PREDEPLOYS.L1Block,
        data: l1Block.encodeFunctionData("setL1BlockValues", [
          number,
          1_700_000_000 + number,
          1n,
          toQuantity(number).padEnd(66, "f"),
          0n,
          `0x${"00".repeat(32)}`,
          0n,
          0n,
        ]),
      },
    ]);
  };

  before(async function () {
    anvil = await startAnvil({ chainId: 901 });
    provider = devnetProvider(anvil.rpcUrl, 901);
    await provider.send("anvil_setCode", [L2_PREDEPLOYS.L1Block, opArtifact("L1Block").deployedBytecode]);
    await provider.send("anvil_impersonateAccount", [DEPOSITOR]);
    await provider.send("anvil_setBalance", [DEPOSITOR, toQuantity(10n ** 18n)]);
    const contract = await new L1BlockHashes__factory(await provider.getSigner(devAccount(0).address)).deploy(L2_PREDEPLOYS.L1Block);
    await contract.waitForDeployment();
    hashes = await contract.getAddress();
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });

  it("records the next block after a call that could not be sent, whose nonce it does not skip", async function () {
    const keeper = devAccount(7);
    const funds = await provider.getBalance(keeper.address);
    // No ETH for gas: the first call fails before it is sent.
    await provider.send("anvil_setBalance", [keeper.address, "0x0"]);
    let failed!: () => void;
    const firstFailure = new Promise<void>((resolve) => (failed = resolve));
    const errors: unknown[] = [];
    await setL1Block(10);
    let recorder: L1HashRecorder | undefined;
    try {
      recorder = await startL1HashRecorder({
        l2: provider,
        l2WsUrl: anvil.wsUrl,
        l1BlockHashes: hashes,
        keeper,
        onError: (error) => {
          errors.push(error);
          failed();
        },
      });
      await firstFailure;
      expect(String(errors[0])).to.match(/fund/i);
      // Paid again: the next L2 block's pass records what L1Block holds then.
      await provider.send("anvil_setBalance", [keeper.address, toQuantity(funds)]);
      await setL1Block(11);
      await recorder.recordedUpTo(11n);
      expect((await L1BlockHashes__factory.connect(hashes, provider).latest()).number).to.equal(11n);
      // One call mined, with the keeper's first nonce.
      expect(await provider.getTransactionCount(keeper.address)).to.equal(1);
    } finally {
      await recorder?.stop();
    }
  });
});
