// `npm start`: runs the local stack until Ctrl-C. Today the stack is a local L1 chain (anvil, chain 900)
// with the token contracts deployed through their Ignition module; the OP-stack devnet, the API and the
// circuit nodes join it as they land.
import { rm } from "node:fs/promises";

import { network } from "hardhat";

import TokensModule from "../deploy/modules/Tokens.js";
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
  console.log("Deploying PrimaryToken and StakedToken…");
  const connection = await network.create({ network: "devnetL1", override: { url: l1.rpcUrl } });
  const { primary, staked } = await connection.ignition.deploy(TokensModule, { displayUi: false });

  const deployer = devAccount(0);
  await writeStackFile({
    l1: { chainId: DEVNET_L1_CHAIN_ID, rpcUrl: l1.rpcUrl },
    contracts: { l1: { PrimaryToken: await primary.getAddress(), StakedToken: await staked.getAddress() } },
    accounts: { deployer },
  });

  console.log(`
Local stack is up.
  L1 RPC        ${l1.rpcUrl} (chain ${DEVNET_L1_CHAIN_ID})
  PrimaryToken  ${await primary.getAddress()}
  StakedToken   ${await staked.getAddress()}
  Deployer      ${deployer.address} (anvil development account 0; holds the whole primary supply)
  Stack file    ${DEFAULT_STACK_FILE}

Try:  curl -s -X POST ${l1.rpcUrl} -H 'Content-Type: application/json' \\
        --data '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"${await primary.getAddress()}","data":"0x18160ddd"},"latest"]}'
Press Ctrl-C to stop.`);
} catch (error) {
  await l1.stop();
  throw error;
}
