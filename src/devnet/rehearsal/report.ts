import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

// What the rehearsal found (`RehearsalReport`), printed for the operator or written as JSON beside a run.

export interface DeployRun {
  script: string;
  chainId: number;
  /** Transactions the killed run had mined when it was killed; 0 if it ended before the first. */
  interruptedAfterTransactions: number;
  interrupted: boolean;
  resumedExitCode: number | null;
  /** A transaction the killed run sent but never recorded, added with `hardhat ignition track-tx` before resuming. */
  trackedTransaction: string | undefined;
  /** Futures the killed run had started without recording a transaction, cleared with `hardhat ignition wipe` before resuming. */
  wipedFutures: string[];
  /** Ignition's futures that sent a transaction in more than one nonce (a redeployment): none expected. */
  futuresSentTwice: string[];
  /** The contract created by the killed run's first transaction is the one recorded after the resume. */
  firstContractKept: boolean;
  /** The deployer's transactions on the chain, Ignition's (its journal) and the script's own. */
  deployerTransactions: number;
  journalTransactions: number;
  gasUsed: bigint;
  addresses: Record<string, string>;
  durationMs: number;
}

export interface GovernanceStep {
  step: string;
  /** What it would take on the live networks, in seconds (0: at once). */
  liveSeconds: number;
  note: string;
}

export interface RehearsalReport {
  chainIds: { l1: number; l2: number };
  /** The hardfork whose rules the rehearsal's L1 ran under. */
  l1Hardfork: string;
  filledParameters: Record<string, string>;
  deployments: { l1: DeployRun; l2: DeployRun };
  governance: {
    proposalId: string;
    steps: GovernanceStep[];
    executedOnL1: boolean;
    executedOnL2: boolean;
    status: string;
    roles: string;
  };
  /** On-chain settings against the live parameter files: each mismatch. */
  settingMismatches: string[];
  /** Roles (and the guardian) held otherwise than docs/governance.md says. */
  unexpectedRoles: string[];
  /** Differences between the live path and the devnet path (`npm start`). */
  differences: string[];
  durationMs: number;
}

/** Seconds as days, hours or minutes. */
export function humanDuration(seconds: number): string {
  if (seconds >= 86_400) return `${+(seconds / 86_400).toFixed(1)} d`;
  if (seconds >= 3_600) return `${+(seconds / 3_600).toFixed(1)} h`;
  if (seconds >= 60) return `${+(seconds / 60).toFixed(1)} min`;
  return `${seconds} s`;
}

/** The report as printed by `npm run rehearse:testnets`. */
export function formatReport(report: RehearsalReport): string {
  const lines: string[] = [];
  lines.push(
    `Rehearsal of the live deployment on chains ${report.chainIds.l1} (L1) and ${report.chainIds.l2} (L2), ${Math.round(report.durationMs / 1000)} s`,
    `L1 under ${report.l1Hardfork.charAt(0).toUpperCase()}${report.l1Hardfork.slice(1)}'s rules: the contracts' evmVersion (hardhat.config.ts); Sepolia runs Prague's`,
  );
  lines.push("", "Placeholders filled in the copied parameter files:");
  for (const [name, address] of Object.entries(report.filledParameters)) lines.push(`  ${name.padEnd(22)}${address}`);
  for (const run of [report.deployments.l1, report.deployments.l2]) {
    lines.push(
      "",
      `npm run ${run.script} (chain ${run.chainId}), ${Math.round(run.durationMs / 1000)} s, ${run.gasUsed.toLocaleString("en-US")} gas:`,
    );
    lines.push(
      `  interrupted: ${run.interrupted ? `killed after ${run.interruptedAfterTransactions} mined transaction(s)` : "NOT interrupted (ended first)"}; ` +
        `resumed: exit ${String(run.resumedExitCode)}; futures sent twice: ${run.futuresSentTwice.length === 0 ? "none" : run.futuresSentTwice.join(", ")}; ` +
        `first contract kept: ${run.firstContractKept ? "yes" : "NO"}`,
    );
    if (run.trackedTransaction !== undefined)
      lines.push(
        `  the killed run's transaction ${run.trackedTransaction} was unknown to Ignition: added with \`hardhat ignition track-tx\` before resuming`,
      );
    for (const future of run.wipedFutures)
      lines.push(
        `  the killed run had started ${future} without recording a transaction: cleared with \`hardhat ignition wipe\` before resuming`,
      );
    lines.push(`  deployer transactions: ${run.deployerTransactions} (${run.journalTransactions} in Ignition's journal)`);
    for (const [future, address] of Object.entries(run.addresses)) lines.push(`  ${future.padEnd(33)}${address}`);
  }
  lines.push(
    "",
    `Governance: proposal ${report.governance.proposalId}, executed on L1: ${report.governance.executedOnL1 ? "yes" : "NO"}, on L2: ${report.governance.executedOnL2 ? "yes" : "NO"}`,
  );
  let total = 0;
  for (const step of report.governance.steps) {
    total += step.liveSeconds;
    lines.push(`  ${step.step.padEnd(16)}${humanDuration(step.liveSeconds).padStart(8)} live${step.note === "" ? "" : `  (${step.note})`}`);
  }
  lines.push(`  ${"total".padEnd(16)}${humanDuration(total).padStart(8)} live`);
  lines.push(
    "",
    "Settings on chain against the live parameter files:",
    ...(report.settingMismatches.length === 0 ? ["  all as written"] : report.settingMismatches.map((m) => `  ${m}`)),
  );
  lines.push(
    "",
    "Roles against docs/governance.md:",
    ...(report.unexpectedRoles.length === 0 ? ["  as documented; the deployer holds none"] : report.unexpectedRoles.map((r) => `  ${r}`)),
  );
  lines.push(
    "",
    "Live path against the devnet path:",
    ...(report.differences.length === 0 ? ["  no difference"] : report.differences.map((d) => `  - ${d}`)),
  );
  return lines.join("\n");
}

/** A place for the rehearsal's report beside the run, for CI or a reviewer. */
export async function writeReport(file: string, report: RehearsalReport): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2)}\n`);
}
