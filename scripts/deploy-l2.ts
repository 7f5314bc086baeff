// `npm run deploy:l2Testnet`: deploys module L2 with deploy/parameters/<network>.json against the L1
// primary token that `deploy:l1Testnet` recorded (or the address in L1_PRIMARY_TOKEN), then starts the
// two-step handover of every admin role to the `admin` parameter.
import { readFile } from "node:fs/promises";
import path from "node:path";

import { isAddress, ZeroAddress } from "ethers";
import { network } from "hardhat";

import { deployL2 } from "../src/deploy/two-chain.js";

// Which L1 each L2 network bridges to.
const L1_CHAIN_OF: Record<string, number> = { l2Testnet: 11155111, devnetL2: 900 };

const connection = await network.connect();
try {
  const l1PrimaryToken = process.env.L1_PRIMARY_TOKEN ?? (await recordedL1Token(connection.networkName));
  // The pairing is permanent (the L2 token's remote token is immutable): refuse anything but an address.
  if (!isAddress(l1PrimaryToken) || l1PrimaryToken === ZeroAddress) {
    throw new Error(`The L1 primary token ${JSON.stringify(l1PrimaryToken)} is not a non-zero address`);
  }
  const deployed = await deployL2(connection, l1PrimaryToken, { displayUi: true });
  const { adminHandovers, ...addresses } = deployed;
  console.log(`\n${connection.networkName}, bridged from L1 token ${l1PrimaryToken}:`);
  for (const [name, address] of Object.entries(addresses)) console.log(`  ${name.padEnd(21)}${address}`);
  for (const handover of adminHandovers) {
    console.log(
      `  admin handover pending: ${handover.newAdmin} must call acceptDefaultAdminTransfer() on ${handover.contract} ` +
        `from ${new Date(Number(handover.acceptableFrom) * 1000).toISOString()}`,
    );
  }
  console.log("Commit deploy/deployments/ and verify with: npx hardhat ignition verify chain-<id>");
} finally {
  await connection.close();
}

async function recordedL1Token(l2Network: string): Promise<string> {
  const l1ChainId = L1_CHAIN_OF[l2Network];
  if (l1ChainId === undefined) throw new Error(`${l2Network} is not an L2 network (known: ${Object.keys(L1_CHAIN_OF).join(", ")})`);
  const file = path.resolve(import.meta.dirname, "..", "deploy", "deployments", `chain-${l1ChainId}`, "deployed_addresses.json");
  try {
    const address = JSON.parse(await readFile(file, "utf8"))["L1#PrimaryToken"];
    if (typeof address === "string") return address;
  } catch {
    // reported below
  }
  throw new Error(`No L1 primary token recorded in ${path.relative(process.cwd(), file)}: deploy L1 first or set L1_PRIMARY_TOKEN`);
}
