// `npm run deploy:l2Testnet`: deploys module L2 with deploy/parameters/<network>.json against the L1
// primary token and timelock that `deploy:l1Testnet` recorded (or L1_PRIMARY_TOKEN and L1_TIMELOCK), then
// starts the two-step handover of every admin role to the governance executor.
import { readFile } from "node:fs/promises";
import path from "node:path";

import { isAddress, ZeroAddress } from "ethers";
import { network } from "hardhat";

import { deployL2 } from "../src/deploy/two-chain.ts";

// Which L1 each L2 network bridges to.
const L1_CHAIN_OF: Record<string, number> = { l2Testnet: 11155111, devnetL2: 900 };

const connection = await network.create();
try {
  const recorded = await recordedL1(connection.networkName);
  const links = {
    l1PrimaryToken: process.env.L1_PRIMARY_TOKEN ?? recorded["L1#PrimaryToken"],
    l1Timelock: process.env.L1_TIMELOCK ?? recorded["L1#ProtocolTimelock"],
    l1DestinationSettler: process.env.L1_DESTINATION_SETTLER ?? recorded["L1#DestinationSettler"],
  };
  const variableOf: Record<keyof typeof links, string> = {
    l1PrimaryToken: "L1_PRIMARY_TOKEN",
    l1Timelock: "L1_TIMELOCK",
    l1DestinationSettler: "L1_DESTINATION_SETTLER",
  };
  // Every link is permanent (the L2 token's remote token, the executor's L1 sender and the origin settler's
  // destination are immutable): refuse anything but an address.
  for (const [name, value] of Object.entries(links) as Array<[keyof typeof links, string | undefined]>) {
    if (value === undefined) throw new Error(`No ${name} recorded for the L1 deployment: deploy L1 first or set ${variableOf[name]}`);
    if (!isAddress(value) || value === ZeroAddress) throw new Error(`${name} ${JSON.stringify(value)} is not a non-zero address`);
  }
  const l1ChainId = BigInt(L1_CHAIN_OF[connection.networkName]);
  const deployed = await deployL2(connection, { ...(links as Record<keyof typeof links, string>), l1ChainId }, { displayUi: true });
  const { adminHandovers, ...addresses } = deployed;
  console.log(`\n${connection.networkName}, bridged from L1 token ${links.l1PrimaryToken}, governed by L1 timelock ${links.l1Timelock}:`);
  for (const [name, address] of Object.entries(addresses)) console.log(`  ${name.padEnd(21)}${address}`);
  for (const handover of adminHandovers) {
    console.log(
      `  admin handover pending to the governance executor on ${handover.contract}, acceptable from ` +
        `${new Date(Number(handover.acceptableFrom) * 1000).toISOString()}`,
    );
  }
  if (adminHandovers.length > 0) {
    console.log("Governance's first proposal accepts them: npm run gov -- --network testnet propose accept-admin");
  }
  console.log("Commit deploy/deployments/ and verify with: npx hardhat ignition verify chain-<id>");
} finally {
  await connection.close();
}

async function recordedL1(l2Network: string): Promise<Record<string, string | undefined>> {
  const l1ChainId = L1_CHAIN_OF[l2Network];
  if (l1ChainId === undefined) throw new Error(`${l2Network} is not an L2 network (known: ${Object.keys(L1_CHAIN_OF).join(", ")})`);
  const file = path.resolve(import.meta.dirname, "..", "deploy", "deployments", `chain-${l1ChainId}`, "deployed_addresses.json");
  try {
    return JSON.parse(await readFile(file, "utf8")) as Record<string, string>;
  } catch {
    return {}; // nothing recorded: the environment must name both
  }
}
