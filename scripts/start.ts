// `npm start`: runs the local stack until Ctrl-C. Today the stack is a local chain (anvil, chain 900)
// with the whole protocol deployed on it through the Protocol Ignition module; the OP-stack devnet, the
// API and the circuit nodes join it as they land.
import { rm } from "node:fs/promises";

import { network } from "hardhat";

import ProtocolModule from "../deploy/modules/Protocol.js";
import { devAccount } from "../src/devnet/accounts.js";
import { startAnvil } from "../src/devnet/anvil.js";
import { DEFAULT_STACK_FILE, writeStackFile } from "../src/devnet/stack-file.js";

const DEVNET_L1_CHAIN_ID = 900;

console.log("Starting the local L1 chain (anvil, chain 900)…");
const l1 = await startAnvil({ chainId: DEVNET_L1_CHAIN_ID });
const stop = async () => {
  console.log("\nStopping the local stack…");
  await l1.stop();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

try {
  // Every start is a new chain: forget the previous start's deployment journal.
  await rm("deploy/deployments/chain-900", { recursive: true, force: true });
  console.log("Deploying the protocol (tokens, licenses, node registry, verification registry)…");
  const connection = await network.create({ network: "devnetL1", override: { url: l1.rpcUrl } });
  const deployed = await connection.ignition.deploy(ProtocolModule, { displayUi: false });
  const contracts: Record<string, string> = {
    PrimaryToken: await deployed.primary.getAddress(),
    StakedToken: await deployed.staked.getAddress(),
    NodeLicense: await deployed.license.getAddress(),
    NodeRegistry: await deployed.nodeRegistry.getAddress(),
    VerificationRegistry: await deployed.verificationRegistry.getAddress(),
  };

  const deployer = devAccount(0);
  await writeStackFile({
    l1: { chainId: DEVNET_L1_CHAIN_ID, rpcUrl: l1.rpcUrl },
    contracts: { l1: contracts },
    accounts: { deployer },
  });

  console.log(`
Local stack is up.
  L1 RPC        ${l1.rpcUrl} (chain ${DEVNET_L1_CHAIN_ID})
${Object.entries(contracts)
  .map(([name, address]) => `  ${name.padEnd(22)}${address}`)
  .join("\n")}
  Deployer      ${deployer.address} (anvil development account 0; admin, holds the whole primary supply)
  Stack file    ${DEFAULT_STACK_FILE}

Try:  curl -s -X POST ${l1.rpcUrl} -H 'Content-Type: application/json' \\
        --data '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"${contracts.PrimaryToken}","data":"0x18160ddd"},"latest"]}'
Press Ctrl-C to stop.`);
} catch (error) {
  await l1.stop();
  throw error;
}
