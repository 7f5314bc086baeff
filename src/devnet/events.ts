import { EventLog, type ContractTransactionReceipt, type Result } from "ethers";

/**
 * The arguments of the first `name` event emitted by the contract a transaction called. ethers decodes a
 * contract call's logs with the contract's interface, but by topic alone, so the address is checked too:
 * an ERC-20 and an ERC-721 `Transfer` share a topic.
 */
export function eventArgs(receipt: ContractTransactionReceipt | null, name: string): Result {
  const emitter = receipt?.to?.toLowerCase();
  const event = receipt?.logs.find(
    (log): log is EventLog => log instanceof EventLog && log.eventName === name && log.address.toLowerCase() === emitter,
  );
  if (event === undefined) throw new Error(`the transaction emitted no ${name} event`);
  return event.args;
}
