import { useQuery } from "@tanstack/react-query";

import { fetchAccount, fetchCatalogue } from "./credits-api";
import type { CreditsSettings } from "./settings";

/** Purchases arrive by webhook and vouchers change on-chain: the account is read again this often. */
export const ACCOUNT_REFRESH_MS = 3_000;

export const creditsQueryKeys = {
  catalogue: (settings: CreditsSettings) => ["credits", "catalogue", settings.serviceUrl] as const,
  account: (settings: CreditsSettings, wallet: string | undefined) =>
    ["credits", "account", settings.serviceUrl, wallet?.toLowerCase()] as const,
};

/** The operator's catalogue and the service's terms (claim contract, chain, currency); it changes rarely. */
export function useCatalogue(settings: CreditsSettings) {
  return useQuery({
    queryKey: creditsQueryKeys.catalogue(settings),
    queryFn: () => fetchCatalogue(settings.serviceUrl),
    staleTime: 60_000,
  });
}

/**
 * The wallet's credits, movements and vouchers, read every few seconds. A refresh that fails keeps the last
 * answer (TanStack Query keeps `data` beside `error`), so the page shows both rather than going blank.
 */
export function useCreditAccount(settings: CreditsSettings, wallet: string | undefined) {
  return useQuery({
    queryKey: creditsQueryKeys.account(settings, wallet),
    queryFn: () => fetchAccount(settings.serviceUrl, wallet!),
    enabled: wallet !== undefined,
    refetchInterval: ACCOUNT_REFRESH_MS,
  });
}
