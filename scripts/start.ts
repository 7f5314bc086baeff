// `npm start`: the whole network on this machine until Ctrl-C: the OP-stack devnet (L1 chain 900, L2
// chain 901), every contract deployed with the devnet parameters, demo holdings on the EVM source (the
// local L1) and a LiteSVM Solana endpoint, three circuit nodes with delegated licenses (quorum 2), and
// the API with a demo key, and the web app. Writes .devnet/stack.json (src/common/stack-file.ts) and prints a
// short guide.
import path from "node:path";

import { startLocalStackFromCli } from "../src/devnet/run-until-stopped.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const { stack, stackFile } = await startLocalStackFromCli(projectRoot, true, true, Number(process.env.WEB_PORT ?? 8788));
const l2 = stack.contracts?.l2 ?? {};
const api = stack.api!;
const [evm] = stack.demo!.evm;
const [svm] = stack.demo!.svm;
const accounts = stack.accounts!;
const nodeOwner = stack.nodes![0];
const [condition] = stack.demo!.conditions ?? [];
const curl = (route: string, body: Record<string, unknown>) =>
  `curl -s '${api.baseUrl}/api/${route}' -H 'Authorization: ${api.apiKey}' -H 'Content-Type: application/json' \\\n        -d '${JSON.stringify(body)}'`;
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

Web app                                 ${stack.web!.url}
Block explorer (L1 and L2)              ${stack.web!.explorerUrl}
  Import a development key into a browser wallet (MetaMask: Import account), then open the app; the
  wallet is asked to add the devnet chains (L1 ${stack.l1!.chainId}, L2 ${stack.l2!.chainId}, RPC URLs above) when a page needs them.
  License owner   ${accounts.nodeOwner1.address}  key ${accounts.nodeOwner1.privateKey}
                  holds license ${nodeOwner.licenseIds.join(", ")}, delegated to node ${nodeOwner.burner}; Delegate, Licenses, Network
  Token holder    ${accounts.tokenHolder.address}  key ${accounts.tokenHolder.privateKey}
                  primary tokens on L1 and L2 and ETH on both; Bridge, Stake, Licenses
  (anvil's public development keys: never use them on a real network)

Try:
  ${curl("ccq-evm", { user_address: evm.user_address, contract_address: evm.contract_address })}
  ${curl("ccq-svm", { owner_address: svm.owner_address, token_mint_address: svm.token_mint_address })}
  ${curl("conditions?attest=true", condition.request)}
                             (${condition.note}: a verdict signed by a quorum; the stack file's demo.conditions has more)
  ${curl("subscriptions", { chain: "ethereum", owner: evm.user_address, asset: evm.contract_address, url: stack.webhooks!.receiverUrl })}
                             (a webhook: each change of that holding is POSTed, signed with the secret this answers, to a
                              receiver the stack runs, which prints it here; npm run demo:webhooks moves a holding and shows one)
  npm run demo:verify        (on-chain jobs answered by the nodes, beside the API's answers; signed verdicts, a game item claimed with one)
  npm run credits:stripe -- purchase --account ${accounts.tokenHolder.address} --credits 5000
                             (buy credits as Stripe would report it: a signed test event to ${stack.credits!.webhookUrl};
                              then spend them on the web app's Credits page, or see them at ${stack.credits!.url}/credits/accounts/<wallet>)
  npm run gov -- status      (governance: proposal 1 handed the L2 contracts to the executor ${l2.GovernanceExecutor};
                              the deployer holds the L1 votes: npm run gov -- propose set-quorum 3, then vote, queue, execute)

Press Ctrl-C to stop.`);
