// `npm run rehearse:testnets`: the dress rehearsal of `deploy:l1Testnet`, `deploy:l2Testnet` and governance's
// first proposal, run as an operator runs them against a local OP devnet with the live chain ids, in a
// temporary copy of the project (the repository's records stay untouched). Logic: src/devnet/rehearsal/.
// REHEARSAL_KEEP=1 keeps the copy (its records and the scripts' logs).
import path from "node:path";

import hre from "hardhat";

import { formatReport, rehearseLiveDeployment } from "../src/devnet/rehearsal/rehearsal.ts";

const chainIdOf = (name: string) => {
  const network = hre.config.networks[name];
  if (network?.chainId === undefined) throw new Error(`hardhat.config.ts names no chain id for ${name}`);
  return network.chainId;
};

const report = await rehearseLiveDeployment({
  projectRoot: path.resolve(import.meta.dirname, ".."),
  live: {
    l1: { network: "l1Testnet", chainId: chainIdOf("l1Testnet") },
    l2: { network: "l2Testnet", chainId: chainIdOf("l2Testnet") },
    l1BlockSeconds: 12,
  },
  keepCopy: process.env.REHEARSAL_KEEP === "1",
  onProgress: (line) => console.log(line),
});
console.log(`\n${formatReport(report)}`);
const failed =
  !report.deployments.l1.interrupted ||
  !report.deployments.l2.interrupted ||
  report.deployments.l1.futuresSentTwice.length + report.deployments.l2.futuresSentTwice.length > 0 ||
  !report.governance.executedOnL2 ||
  report.unexpectedRoles.length > 0 ||
  report.settingMismatches.length > 0;
process.exitCode = failed ? 1 : 0;
