// `npm run deploy:l2Testnet`: deploys module L2 with deploy/parameters/<network>.json against the L1
// primary token and timelock that `deploy:l1Testnet` recorded (or L1_PRIMARY_TOKEN and L1_TIMELOCK), then
// starts the two-step handover of every admin role to the governance executor. Last, it deploys module
// L1Intents on the L1 (the escrow of fast deposits, which names the L2's destination settler), with the L1
// messenger of deploy/op-chains/<network>.json (or L1_CROSS_DOMAIN_MESSENGER).
import { readFile } from "node:fs/promises";
import path from "node:path";

import { isAddress, ZeroAddress } from "ethers";
import { network } from "hardhat";

import { deployL1Intents, deployL2 } from "../src/deploy/two-chain.ts";

// Which L1 each L2 network bridges to, by chain id and by Hardhat network.
const L1_CHAIN_OF: Record<string, number> = { l2Testnet: 11155111, devnetL2: 900 };
const L1_NETWORK_OF: Record<string, string> = { l2Testnet: "l1Testnet", devnetL2: "devnetL1" };

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
  const l1OriginSettler = await deployFastDeposits(connection.networkName, {
    l1PrimaryToken: links.l1PrimaryToken!,
    l2PrimaryToken: addresses.PrimaryToken,
    l2DestinationSettler: addresses.DestinationSettler,
    l2ChainId: (await connection.ethers.provider.getNetwork()).chainId,
  });
  console.log(`\nL1 ${L1_NETWORK_OF[connection.networkName]}: fast deposits' L1OriginSettler ${l1OriginSettler}`);
  console.log("Commit deploy/deployments/ and verify with: npx hardhat ignition verify chain-<id>");
} finally {
  await connection.close();
}

/** Module L1Intents on the L1 of `l2Network`, after the L2, whose destination settler it names. */
async function deployFastDeposits(
  l2Network: string,
  links: { l1PrimaryToken: string; l2PrimaryToken: string; l2DestinationSettler: string; l2ChainId: bigint },
): Promise<string> {
  const l1Messenger = process.env.L1_CROSS_DOMAIN_MESSENGER ?? (await recordedMessenger(l2Network));
  if (l1Messenger === undefined || !isAddress(l1Messenger) || l1Messenger === ZeroAddress)
    throw new Error(
      `No L1CrossDomainMessenger for ${l2Network}: name it in deploy/op-chains/${l2Network}.json or set L1_CROSS_DOMAIN_MESSENGER`,
    );
  const l1Connection = await network.create({ network: L1_NETWORK_OF[l2Network] });
  try {
    return await deployL1Intents(l1Connection, { ...links, l1Messenger }, { displayUi: true });
  } finally {
    await l1Connection.close();
  }
}

async function recordedMessenger(l2Network: string): Promise<string | undefined> {
  const file = path.resolve(import.meta.dirname, "..", "deploy", "op-chains", `${l2Network}.json`);
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { contracts?: { L1CrossDomainMessenger?: string } };
    return parsed.contracts?.L1CrossDomainMessenger;
  } catch {
    return undefined; // no file: the environment must name it
  }
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
