import { AvnError } from "@avn/protocol/errors";
/**
 * Errors of the source adapters, shared by the API (which maps them to HTTP statuses in one place) and
 * the circuit node. Messages never contain an upstream URL: hosted RPC URLs carry API keys.
 */
export class SourceError extends AvnError {
  /** `code` is the class's name in capitals without `Error` (`AssetNotFoundError`: `ASSET_NOT_FOUND`). */
  constructor(message: string, options?: ErrorOptions) {
    super(codeOfName(new.target.name), message, options);
    this.name = new.target.name;
  }
}

function codeOfName(name: string): string {
  return name
    .replace(/Error$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toUpperCase();
}

/** The asset is not there: no contract/mint at the address, or not a token. */
export class AssetNotFoundError extends SourceError {}

/**
 * The asset is an ERC-1155 contract (ERC-165 says so) and was asked without a token id: it has no
 * single-argument `balanceOf`. An `AssetNotFoundError` for the node (nothing to sign), a 400 for the API.
 */
export class TokenIdRequiredError extends AssetNotFoundError {
  readonly asset: string;

  constructor(asset: string) {
    super(`${asset} is an ERC-1155 contract: a balance there needs a token id`);
    this.asset = asset;
  }
}

/** More wallets (or ERC-721 tokens) delegate to an owner than one answer reads: the API's 422, never a smaller sum. */
export class DelegationLimitError extends SourceError {}

/** The Ethereum source has no delegate.xyz registry at its address: delegations cannot be read there (the API's 501). */
export class DelegationsUnavailableError extends SourceError {}

/** Every upstream failed (down, too slow, or answering garbage) after retries and failover. */
export class UpstreamUnavailableError extends SourceError {}

/** One upstream attempt failed; retried on the next URL. */
export class UpstreamAttemptError extends SourceError {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.retryable = retryable;
  }
}
