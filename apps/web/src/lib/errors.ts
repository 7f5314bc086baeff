import { BaseError, ContractFunctionRevertedError, UserRejectedRequestError } from "viem";

/**
 * One readable sentence for anything a wallet or a contract call throws: a rejection in the wallet, a
 * contract's custom error decoded by name with its arguments (the ABIs come from the artifacts, so
 * every custom error of the protocol decodes), or viem's short message. Never a raw hex revert and
 * never an RPC URL.
 */
export function describeError(error: unknown): string {
  if (error instanceof BaseError) {
    const rejected = error.walk((cause) => cause instanceof UserRejectedRequestError || (cause as { code?: unknown }).code === 4001);
    if (rejected !== null) return "You rejected the request in your wallet.";
    const revert = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) {
      if (revert.data?.errorName !== undefined) {
        const args = (revert.data.args ?? []).map(formatArgument).join(", ");
        return `The contract refused: ${humanizeErrorName(revert.data.errorName)} (${revert.data.errorName}${args === "" ? "" : `: ${args}`}).`;
      }
      if (revert.reason !== undefined) return `The contract refused: ${revert.reason}.`;
      return "The contract refused the call without giving a reason.";
    }
    return withoutUrls(error.shortMessage || error.message);
  }
  if (typeof error === "object" && error !== null && (error as { code?: unknown }).code === 4001)
    return "You rejected the request in your wallet.";
  return withoutUrls(error instanceof Error ? error.message : String(error));
}

/** `NodeRegistry_NotLicenseOwner` → "not license owner"; `ERC20InsufficientBalance` → "insufficient balance". */
export function humanizeErrorName(name: string): string {
  const bare = name.includes("_")
    ? name.slice(name.lastIndexOf("_") + 1)
    : name.replace(/^(ERC20|ERC721|ERC1155|Ownable|AccessControl|SafeERC20)/, "");
  return bare.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

function formatArgument(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(formatArgument).join(", ")}]`;
  return String(value);
}

function withoutUrls(text: string): string {
  return text.replace(/\b(?:https?|wss?):\/\/\S+/g, "<rpc>");
}
