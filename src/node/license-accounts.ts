import type { Logger } from "pino";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import { describeError } from "../common/describe-error.ts";
import type { TxOutcome, TxSender } from "./tx-sender.ts";

export interface LicenseAccountsOptions {
  /** The registry on the L2 provider in use now. */
  registry: () => Pick<VerificationRegistry, "isLicenseAccountOpen" | "interface">;
  registryAddress: string;
  sender: Pick<TxSender, "send">;
  logger: Logger;
}

/**
 * Opens, with the burner's gas, the fee accounts of `licenseIds` that are not open yet
 * (`VerificationRegistry.openLicenseAccounts`; `isLicenseAccountOpen` tells which): one transaction for all of
 * them, none when every one is open (as the owner's set-up usually leaves them). An account not open makes
 * the first recording or finalization that pays its license also pay its slot's first write, ~17k gas more
 * per license, which would fall on an integrator; the node, which earns the license's fees, pays it instead,
 * once. Sent before the first heartbeat, through the same sender, so it is mined before the licenses are
 * live and can sign anything a recording pays. Best effort: a failed read or send is logged and start-up
 * goes on (the license's first fee opens its account anyway, at that fee's payer's cost). Resolves once the
 * transaction is sent (not mined), with the licenses it opens and its outcome; to nothing when none was sent.
 */
export async function openLicenseAccounts(
  licenseIds: readonly bigint[],
  options: LicenseAccountsOptions,
): Promise<{ licenseIds: bigint[]; outcome: Promise<TxOutcome> } | undefined> {
  const log = options.logger.child({ component: "license-accounts" });
  try {
    const registry = options.registry();
    const open = await Promise.all(licenseIds.map((licenseId) => registry.isLicenseAccountOpen(licenseId)));
    const closed = licenseIds.filter((_, index) => !open[index]);
    if (closed.length === 0) return undefined;
    const data = registry.interface.encodeFunctionData("openLicenseAccounts", [closed]);
    const { outcome } = await options.sender.send("openLicenseAccounts", options.registryAddress, data);
    log.info({ licenses: closed.map(String) }, "opening the licenses' fee accounts (a one-time write, so recordings do not pay it)");
    return { licenseIds: closed, outcome };
  } catch (error) {
    log.warn(
      { licenses: licenseIds.map(String), error: describeError(error) },
      "could not open the licenses' fee accounts; their first fee will open them",
    );
    return undefined;
  }
}
