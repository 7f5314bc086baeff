// Prints the gas of each operation as whole mined transactions on Hardhat's in-process network: the token
// operations beside a plain OpenZeppelin ERC-20 transfer measured in the same run, then the node and
// verification operations against the targets, then a verified balance's cost by the job path and
// by the attested path side by side, then storage proofs' verification (the calldata walk beside the Bedrock
// verifier it replaced, at the devnet's depth, at mainnet's and through EIP-2935's history), then a claim on
// the credits channel's claim platform for each kind of item. Usage: npm run bench:gas
import { network } from "hardhat";

import { formatAttestationTable, measureAttestationGas } from "../src/bench/attestation-gas.ts";
import { measureCreditsGas } from "../src/bench/credits-gas.ts";
import { formatEasTable, measureEasExportGas } from "../src/bench/eas-gas.ts";
import { formatProofTable, measureProofGas } from "../src/bench/proof-gas.ts";
import { formatGasTable, measureTokenGas } from "../src/bench/token-gas.ts";
import { formatTargetTable, measureVerificationGas } from "../src/bench/verification-gas.ts";

const { ethers, networkHelpers } = await network.create();
console.log(formatGasTable(await measureTokenGas(ethers, networkHelpers)));
console.log();
console.log(formatTargetTable(await measureVerificationGas(ethers, networkHelpers)));
console.log();
console.log(formatAttestationTable(await measureAttestationGas(ethers)));
console.log();
console.log(formatEasTable(await measureEasExportGas(ethers)));
console.log();
console.log(formatProofTable(await measureProofGas(ethers)));
console.log();
console.log(formatTargetTable(await measureCreditsGas(ethers), [], "claim (recipient's first of the asset)"));
