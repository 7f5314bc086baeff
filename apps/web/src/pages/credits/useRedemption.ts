import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { toHex, type Address, type Hex } from "viem";
import { useConfig } from "wagmi";
import { getConnection, signTypedData } from "wagmi/actions";

import { creditsDomain, REDEMPTION_TYPES } from "@avn/protocol/credits/typed-data";
import { describeError } from "../../lib/errors";
import { CreditsServiceError, postRedemption, type RedemptionAnswer } from "./credits-api";
import type { CreditsSettings } from "./settings";
import { creditsQueryKeys } from "./useCredits";

/** Where one item's redemption stands. */
export type RedemptionState =
  | { status: "idle" }
  | { status: "signing" }
  | { status: "sending" }
  | { status: "made"; answer: RedemptionAnswer }
  | { status: "refused"; message: string }
  /** No usable answer: the service may have made the voucher. Redeem again sends the same request. */
  | { status: "uncertain"; message: string };

/**
 * A request not yet known to be made: its id, and its signature while fresh. Kept until the service makes
 * the voucher, so that pressing Redeem again after a lost answer sends the same request, which the
 * service answers with the voucher it made the first time rather than spending the credits twice.
 */
interface OpenRequest {
  /** The account, item, quantity and recipient it is for: another choice is another request. */
  key: string;
  requestId: Hex;
  signed?: { issuedAt: bigint; maxPrice: bigint; signature: Hex };
}

/** The service takes requests signed up to 10 minutes ago; a retry older than this is signed again (same id). */
const SIGNATURE_REUSE_SECONDS = 300n;

const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));
const randomRequestId = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)));

/**
 * Redeems `quantity` units of item `itemId` for the connected wallet: the wallet signs the
 * `CreditRedemption` (EIP-712, under the claim contract's domain on the L2), the page posts it, and the
 * service answers the voucher or says why not. The wallet must be on the L2 (the domain names it, and
 * wallets refuse to sign for another chain than theirs); the caller offers the switch.
 */
export function useRedemption(settings: CreditsSettings, itemId: number) {
  const wagmiConfig = useConfig();
  const queryClient = useQueryClient();
  const open = useRef<OpenRequest | undefined>(undefined);
  const [state, setState] = useState<RedemptionState>({ status: "idle" });
  // Counts the presses, so that an observer (a test) can tell a new outcome from the previous one.
  const [attempts, setAttempts] = useState(0);

  const redeem = useCallback(
    /** `maxPrice`: the price the page shows for it, which the wallet signs as the most it agrees to pay. */
    async (quantity: bigint, maxPrice: bigint) => {
      setAttempts((count) => count + 1);
      const { address: account, chainId } = getConnection(wagmiConfig);
      if (account === undefined) return setState({ status: "refused", message: "Connect a wallet first." });
      if (chainId !== settings.chainId)
        return setState({ status: "refused", message: "Switch your wallet to the L2 first: the request is signed for it." });
      // The page redeems for the connected wallet; the service would also deliver to another recipient.
      const recipient: Address = account;
      const key = [account, itemId, quantity, recipient].join(":").toLowerCase();
      if (open.current?.key !== key) open.current = { key, requestId: randomRequestId() };
      const request = open.current;
      try {
        let signed = request.signed;
        if (signed === undefined || nowSeconds() - signed.issuedAt > SIGNATURE_REUSE_SECONDS || signed.maxPrice !== maxPrice) {
          setState({ status: "signing" });
          const issuedAt = nowSeconds();
          const signature = await signTypedData(wagmiConfig, {
            account,
            domain: creditsDomain(settings.chainId, settings.claimsContract),
            types: REDEMPTION_TYPES,
            primaryType: "CreditRedemption",
            message: { account, itemId: BigInt(itemId), quantity, maxPrice, recipient, requestId: request.requestId, issuedAt },
          });
          signed = request.signed = { issuedAt, maxPrice, signature };
        }
        setState({ status: "sending" });
        const answer = await postRedemption(settings.serviceUrl, {
          redemption: {
            account,
            itemId: String(itemId),
            quantity: quantity.toString(),
            maxPrice: signed.maxPrice.toString(),
            recipient,
            requestId: request.requestId,
            issuedAt: signed.issuedAt.toString(),
          },
          signature: signed.signature,
        });
        // Made: the next press is a new redemption, under a new id.
        open.current = undefined;
        setState({ status: "made", answer });
      } catch (error) {
        if (error instanceof CreditsServiceError && error.mayHaveActed) {
          setState({ status: "uncertain", message: error.message });
        } else {
          // A refusal changed nothing. The id stays (a request under it may still have been made by an
          // earlier press whose answer was lost); the signature goes, so the next press is signed afresh.
          request.signed = undefined;
          // Unless the service says the id is taken by another redemption: a fresh one then.
          if (error instanceof CreditsServiceError && error.status === 409) open.current = undefined;
          // A price changed since the catalogue was read: read it again, so the page shows (and signs) the new one.
          if (error instanceof CreditsServiceError && error.status === 409)
            await queryClient.invalidateQueries({ queryKey: creditsQueryKeys.catalogue(settings) });
          setState({ status: "refused", message: error instanceof CreditsServiceError ? error.message : describeError(error) });
        }
      }
      // Whatever happened, the balance and the vouchers may have changed.
      await queryClient.invalidateQueries({ queryKey: creditsQueryKeys.account(settings, account) });
    },
    [wagmiConfig, queryClient, settings, itemId],
  );

  return { state, attempts, redeem };
}
