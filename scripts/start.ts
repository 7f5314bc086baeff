// `npm start`: the whole network on this machine until Ctrl-C: the OP-stack devnet (L1 chain 900, L2
// chain 901), every contract deployed with the devnet parameters, demo holdings on the EVM source (the
// local L1) and a LiteSVM Solana endpoint, three circuit nodes with delegated licenses (quorum 2), and
// the API with a demo key. Writes .devnet/stack.json (DESIGN section 6) and prints a short guide.
import path from "node:path";

import { startLocalStackFromCli } from "../src/devnet/run-until-stopped.js";

const projectRoot = path.resolve(import.meta.dirname, "..");
const { stack, stackFile } = await startLocalStackFromCli(projectRoot, true, true);
const l2 = stack.contracts?.l2 ?? {};
const api = stack.api!;
const [evm] = stack.demo!.evm;
const [svm] = stack.demo!.svm;
const curl = (route: string, body: Record<string, string>) =>
  `curl -s ${api.baseUrl}/api/${route} -H 'Authorization: ${api.apiKey}' -H 'Content-Type: application/json' \\\n        -d '${JSON.stringify(body)}'`;
console.log(`
Local stack is up.
  L1 (chain ${stack.l1!.chainId}, also the EVM source)  ${stack.l1!.rpcUrl}
  L2 (chain ${stack.l2!.chainId})                       ${stack.l2!.rpcUrl}   ${stack.l2!.wsUrl}
  Solana source (LiteSVM)                 ${stack.solana!.rpcUrl}
  API                                     ${api.baseUrl}   demo key: ${api.apiKey}
  VerificationRegistry (L2)               ${l2.VerificationRegistry}
  GameItem example (L2)                   ${l2.GameItem}
  Circuit nodes                           ${stack.nodes!.map((node) => `${node.burner} (license ${node.licenseIds.join(", ")})`).join("\n                                          ")}
  Stack file                              ${path.relative(process.cwd(), stackFile)} (addresses, dev keys, demo holdings)

Try:
  ${curl("ccq-evm", { user_address: evm.user_address, contract_address: evm.contract_address })}
  ${curl("ccq-svm", { owner_address: svm.owner_address, token_mint_address: svm.token_mint_address })}
  npm run demo:verify        (on-chain jobs answered by the nodes, beside the API's answers)

Press Ctrl-C to stop.`);
