// `npm start`: runs the local stack until Ctrl-C. Today the stack is a local chain (anvil, chain 900)
// with the whole protocol deployed on it through the Protocol Ignition module; the OP-stack devnet, the
// API and the circuit nodes join it as they land.
import { rm } from "node:fs/promises";
import path from "node:path";

import { network } from "hardhat";

import ProtocolModule from "../deploy/modules/Protocol.js";
import { devAccount } from "../src/devnet/accounts.js";
import { startAnvil, type AnvilInstance } from "../src/devnet/anvil.js";
import { removeStackFile, stackFilePath, writeStackFile } from "../src/devnet/stack-file.js";

const DEVNET_L1_CHAIN_ID = 900;
// Paths from the project root, whatever directory the command runs in.
const projectRoot = path.resolve(import.meta.dirname, "..");
const stackFile = stackFilePath(projectRoot);
const deploymentJournal = path.join(projectRoot, "deploy", "deployments", `chain-${DEVNET_L1_CHAIN_ID}`);

let l1: AnvilInstance | undefined;
let stopping = false;
async function stop(exitCode: number): Promise<never> {
  stopping = true;
  await removeStackFile(stackFile);
  await l1?.stop();
  process.exit(exitCode);
}
process.once("SIGINT", () => {
  console.log("\nStopping the local stack…");
  void stop(130);
});
process.once("SIGTERM", () => void stop(143));

try {
  await removeStackFile(stackFile);
  console.log("Starting the local L1 chain (anvil, chain 900)…");
  l1 = await startAnvil({ chainId: DEVNET_L1_CHAIN_ID });
  l1.process.once("exit", (code) => {
    if (stopping) return;
    console.error(`The local chain stopped unexpectedly (exit code ${code}); stopping the stack.`);
    void stop(1);
  });

  // Every start is a new chain: forget the previous start's deployment journal.
  await rm(deploymentJournal, { recursive: true, force: true });
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
  await writeStackFile(stackFile, {
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
  Stack file    ${path.relative(process.cwd(), stackFile)}

Try:  curl -s -X POST ${l1.rpcUrl} -H 'Content-Type: application/json' \\
        --data '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"${contracts.PrimaryToken}","data":"0x18160ddd"},"latest"]}'
Press Ctrl-C to stop.`);
} catch (error) {
  console.error(`The local stack could not start: ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
}
