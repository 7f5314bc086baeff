import type { Address } from "viem";

import type { AppSettings } from "../../app-context";

/** Where the credits channel of this deployment is: its service, and the claim contract on the L2. */
export interface CreditsSettings {
  serviceUrl: string;
  claimsContract: Address;
  /** The L2's chain id: the domain of the redemption requests the wallet signs, and where vouchers are claimed. */
  chainId: number;
}

/** The deployment's credits channel, or undefined when its configuration names none (the schema takes both parts or neither). */
export function creditsSettings({ config, chains }: AppSettings): CreditsSettings | undefined {
  const claimsContract = config.contracts.l2.VoucherClaims;
  if (config.credits === undefined || claimsContract === undefined) return undefined;
  return { serviceUrl: config.credits.url, claimsContract, chainId: chains.l2.id };
}

/**
 * Why the service cannot serve this deployment, if it answers for another claim contract or chain: the
 * wallet would sign requests the service refuses, and vouchers would be for a contract the page does not
 * claim on.
 */
export function serviceMismatch(settings: CreditsSettings, catalogue: { claimsContract: string; chainId: string }): string | undefined {
  if (catalogue.claimsContract.toLowerCase() === settings.claimsContract.toLowerCase() && Number(catalogue.chainId) === settings.chainId)
    return undefined;
  return (
    `The credits service serves the claim contract ${catalogue.claimsContract} on chain ${catalogue.chainId}, ` +
    `but this deployment's is ${settings.claimsContract} on chain ${settings.chainId}: the two are not configured for each other.`
  );
}
