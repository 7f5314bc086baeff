import { AvnError, httpStatusCode } from "@avn/protocol/errors";
import { getAddress } from "ethers";

import { AssetNotFoundError, DelegationLimitError, DelegationsUnavailableError, TokenIdRequiredError } from "../chains/rpc/errors.ts";
import { QuorumNotReachedError } from "./attestation-hub/rounds.ts";

/** An error with the HTTP status and the message the client sees; its code is the status's name (`NOT_FOUND`). */
export class ApiError extends AvnError {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(httpStatusCode(status), message);
    this.name = "ApiError";
    this.status = status;
    this.headers = headers;
  }
}

/**
 * The one place where errors become HTTP statuses. Anything not known is a 500 whose message says
 * nothing about the cause: the details go to the log, never to the client.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof TokenIdRequiredError)
    return new ApiError(
      400,
      `token_id is required: the contract at ${getAddress(error.asset)} is an ERC-1155 token, whose balances are per token id`,
    );
  if (error instanceof AssetNotFoundError) return new ApiError(404, "No token found at the given address");
  // More delegating wallets than one answer reads: a smaller sum would be a wrong answer, so none.
  if (error instanceof DelegationLimitError) return new ApiError(422, error.message);
  if (error instanceof DelegationsUnavailableError) return new ApiError(501, error.message);
  // Never an unsigned 200 that looks attested: the client retries shortly.
  if (error instanceof QuorumNotReachedError) return new ApiError(503, error.message, { "retry-after": "1" });
  const fastify = error as { code?: string; statusCode?: number; validation?: unknown; message?: string };
  if (fastify.validation !== undefined) return new ApiError(400, `Invalid request: ${fastify.message}`);
  switch (fastify.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError(400, "Content-Type must be application/json");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError(400, "The request body is not valid JSON");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      // The specification knows no 413: an oversized body is a malformed request.
      return new ApiError(400, "The request body is too large");
  }
  if (typeof fastify.statusCode === "number" && fastify.statusCode >= 400 && fastify.statusCode < 500) {
    return new ApiError(400, "Bad request");
  }
  return new ApiError(500, "Internal error: the balance could not be fetched");
}
