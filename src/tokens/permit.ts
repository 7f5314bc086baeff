import { Signature, type TypedDataDomain, type TypedDataField } from "ethers";

/** The EIP-2612 `Permit` struct, as the primary token's EIP-712 domain signs it. */
export interface Permit {
  owner: string;
  spender: string;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}

interface TypedDataSigner {
  signTypedData(domain: TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>): Promise<string>;
}

interface PermitToken {
  name(): Promise<string>;
  getAddress(): Promise<string>;
}

const PERMIT_TYPES: Record<string, TypedDataField[]> = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
};

/**
 * Signs an EIP-2612 permit for an OpenZeppelin ERC20Permit token (domain version "1"). `signer` is
 * normally `permit.owner`; tests pass another signer to check that forgeries are refused.
 */
export async function signPermit(signer: TypedDataSigner, token: PermitToken, chainId: bigint, permit: Permit): Promise<Signature> {
  const domain = { name: await token.name(), version: "1", chainId, verifyingContract: await token.getAddress() };
  return Signature.from(await signer.signTypedData(domain, PERMIT_TYPES, { ...permit }));
}
