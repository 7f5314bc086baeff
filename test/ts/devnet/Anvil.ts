import { expect } from "chai";
import { JsonRpcProvider } from "ethers";

import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil } from "../../../src/devnet/anvil.ts";

describe("devnet: anvil launcher", function () {
  it("starts anvil on a free port with the chain id asked for, funds the dev accounts, and stops it", async function () {
    const anvil = await startAnvil({ chainId: 900 });
    const provider = new JsonRpcProvider(anvil.rpcUrl, undefined, { staticNetwork: true });
    try {
      expect((await provider.getNetwork()).chainId).to.equal(900n);
      expect(await provider.getBalance(devAccount(0).address)).to.be.greaterThan(0n);
    } finally {
      await anvil.stop();
    }
    provider.destroy();
    // Stopped means the port no longer answers.
    const afterStop = await fetch(anvil.rpcUrl, { method: "POST" }).then(
      () => "answered",
      (error: Error) => error.message,
    );
    expect(afterStop).to.equal("fetch failed");
  });

  it("runs two chains side by side on distinct ports", async function () {
    const [a, b] = await Promise.all([startAnvil({ chainId: 900 }), startAnvil({ chainId: 901, optimism: true })]);
    try {
      expect(a.port).to.not.equal(b.port);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("derives anvil's well-known first development account", function () {
    expect(devAccount(0).address).to.equal("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  });
});
