// Deploys GatedDrop on the running stack's L2, asks the API for an attested balance through @avn/sdk, checks
// it off-chain and with the verifier's view, and claims the drop with it; then shows that a second claim is
// refused. Run after `npx hardhat build`, with `npm start` running in the repository root:
//
//   node scripts/claim.ts
//
// Everything comes from the stack file `npm start` writes (AVN_STACK_FILE, default ../../.devnet/stack.json):
// the API's URL and demo key, the L2's RPC, the AttestationVerifier's address, and a demo holding with its
// holder's key (anvil's public development keys: worthless anywhere else). Against another deployment, set
// AVN_API_URL, AVN_API_KEY, L2_RPC_URL, ATTESTATION_VERIFIER, TOKEN and PRIVATE_KEY instead.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { AvnApiError, AvnClient, toContractAttestation, verifyAttestation } from "@avn/sdk";
import { createPublicClient, createWalletClient, defineChain, http, type Abi, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

interface StackFile {
  l2: { chainId: number; rpcUrl: string };
  api: { baseUrl: string; apiKey: string };
  contracts: { l2: Record<string, string> };
  accounts: Record<string, { address: string; privateKey: string }>;
  demo: { evm: Array<Record<string, string>> };
}

/** The settings, from the environment where set, else from the running stack's file. */
function settings() {
  const env = process.env;
  const fromEnvironment = ["AVN_API_URL", "AVN_API_KEY", "L2_RPC_URL", "ATTESTATION_VERIFIER", "TOKEN", "PRIVATE_KEY"].every(
    (name) => env[name],
  );
  if (fromEnvironment) {
    return {
      apiUrl: env.AVN_API_URL!,
      apiKey: env.AVN_API_KEY!,
      rpcUrl: env.L2_RPC_URL!,
      verifier: env.ATTESTATION_VERIFIER as Address,
      token: env.TOKEN as Address,
      privateKey: env.PRIVATE_KEY as Hex,
    };
  }
  const file = env.AVN_STACK_FILE ?? fileURLToPath(new URL("../../../.devnet/stack.json", import.meta.url));
  let stack: StackFile;
  try {
    stack = JSON.parse(readFileSync(file, "utf8")) as StackFile;
  } catch {
    throw new Error(
      `no stack file at ${file}: run \`npm start\` in the repository root, or set the variables named at the top of this script`,
    );
  }
  // The demo's first Ethereum holding: an ERC-20 balance above 2^53, held by the demo holder.
  const holding = stack.demo.evm.find(
    (entry) => entry.kind === "erc20" && entry.user_address.toLowerCase() === stack.accounts.demoHolder.address.toLowerCase(),
  );
  if (holding === undefined) throw new Error("the stack file names no ERC-20 demo holding of the demo holder");
  return {
    apiUrl: stack.api.baseUrl,
    apiKey: stack.api.apiKey,
    rpcUrl: stack.l2.rpcUrl,
    verifier: stack.contracts.l2.AttestationVerifier as Address,
    token: holding.contract_address as Address,
    privateKey: stack.accounts.demoHolder.privateKey as Hex,
  };
}

const config = settings();
const artifact = JSON.parse(readFileSync(new URL("../artifacts/contracts/GatedDrop.sol/GatedDrop.json", import.meta.url), "utf8")) as {
  abi: Abi;
  bytecode: Hex;
};

// Plain viem clients: no gas or fee overrides anywhere, the wallet estimates each transaction itself.
const bootstrap = createPublicClient({ transport: http(config.rpcUrl) });
const chain = defineChain({
  id: await bootstrap.getChainId(),
  name: "AVN L2",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [config.rpcUrl] } },
});
const publicClient = createPublicClient({ chain, transport: http(config.rpcUrl) });
const account = privateKeyToAccount(config.privateKey);
const wallet = createWalletClient({ account, chain, transport: http(config.rpcUrl) });

// 1. Deploy the gated contract: attestations at most 10 minutes old, at least one unit of the token.
const deployHash = await wallet.deployContract({
  abi: artifact.abi,
  bytecode: artifact.bytecode,
  args: [config.verifier, 600n, config.token, 1n],
});
const drop = (await publicClient.waitForTransactionReceipt({ hash: deployHash })).contractAddress!;
console.log(`GatedDrop deployed at ${drop}`);

// 2. Ask the API for the holder's balance, signed by a quorum of the network's nodes.
const client = new AvnClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });
const answer = await client
  .evmBalance({ userAddress: account.address, contractAddress: config.token }, { attest: true })
  .catch((error: unknown) => {
    // AvnApiError carries the HTTP status and the API's own message (429s were already retried).
    if (error instanceof AvnApiError) throw new Error(`the API answered ${error.status}: ${error.message}`);
    throw error;
  });
if (answer.attestation === undefined) throw new Error("the API sent no attestation");
console.log(`attested balance: ${answer.balance} (exact: a bigint, whatever its size)`);

// 3. Check it before spending gas: the signatures off-chain, then the network's verifier's own view on the L2.
// \`verifier\`: the AttestationVerifier this integration trusts. Without it, an attestation could name a
// contract of its author's own that approves anything.
const verification = await verifyAttestation(answer.attestation, { publicClient, maxAge: 600, verifier: config.verifier });
if (!verification.valid) throw new Error(`the attestation is not valid: ${verification.reason}`);
console.log(`valid: signed by ${verification.signers.length} nodes for licenses ${verification.licenseIds.join(", ")}`);

// 4. Claim with it.
const { attestation, signatures } = toContractAttestation(answer.attestation);
const { request } = await publicClient.simulateContract({
  account,
  address: drop,
  abi: artifact.abi,
  functionName: "claim",
  args: [attestation, signatures],
});
const claimReceipt = await publicClient.waitForTransactionReceipt({ hash: await wallet.writeContract(request) });
console.log(`claimed in block ${claimReceipt.blockNumber}: status ${claimReceipt.status}, gas used ${claimReceipt.gasUsed}`);

// 5. A second claim is refused, by name, before anything is sent.
let refusal = "none";
try {
  await publicClient.simulateContract({
    account,
    address: drop,
    abi: artifact.abi,
    functionName: "claim",
    args: [attestation, signatures],
  });
} catch (error) {
  refusal = (error as { cause?: { data?: { errorName?: string } } }).cause?.data?.errorName ?? String(error);
}
console.log(`a second claim: ${refusal}`);

const claimed = await publicClient.readContract({ address: drop, abi: artifact.abi, functionName: "claimed", args: [account.address] });
// The last line, for scripts and the repository's test: what happened, as JSON.
console.log(
  JSON.stringify({
    drop,
    holder: account.address,
    balance: answer.balance.toString(),
    claimed,
    claimStatus: claimReceipt.status,
    claimGas: claimReceipt.gasUsed.toString(),
    secondClaim: refusal,
  }),
);
