// `npm run deploy:l1Testnet`: deploys module L1 (the primary token, the governor and its timelock) with
// deploy/parameters/<network>.json. Ignition records the addresses in
// deploy/deployments/chain-<id>/ (commit that folder after a live deployment) and resumes an interrupted run.
import { network } from "hardhat";

import { deployL1 } from "../src/deploy/two-chain.ts";

const connection = await network.create();
try {
  const deployed = await deployL1(connection, { displayUi: true });
  console.log(`\n${connection.networkName}:`);
  for (const [name, address] of Object.entries(deployed)) console.log(`  ${name.padEnd(13)}${address}`);
  console.log("Commit deploy/deployments/ and verify with: npx hardhat ignition verify chain-<id>");
} finally {
  await connection.close();
}
