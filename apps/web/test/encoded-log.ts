import {
  encodeAbiParameters,
  encodeEventTopics,
  getAbiItem,
  keccak256,
  toHex,
  type Abi,
  type AbiEvent,
  type Address,
  type Log,
} from "viem";

/** Where a log sits: its emitter, and its transaction and index (which tell logs seen twice apart). */
export interface LogPosition {
  address: Address;
  transactionIndex?: number;
  logIndex: number;
  blockNumber?: bigint;
}

/**
 * The raw log a contract leaves when it emits `eventName` with `args`, as a node returns it: the event's
 * topics (its selector and indexed arguments, `encodeEventTopics`) and its data (the other arguments,
 * `encodeAbiParameters`). What the app decodes is then what a chain would hand it.
 */
export function encodedLog(abi: Abi, eventName: string, args: Record<string, unknown>, position: LogPosition): Log {
  const event = getAbiItem({ abi, name: eventName }) as AbiEvent | undefined;
  if (event === undefined || event.type !== "event") throw new Error(`no event ${eventName} in the ABI`);
  const unindexed = event.inputs.filter((input) => input.indexed !== true);
  const missing = event.inputs.filter((input) => !(input.name! in args)).map((input) => input.name);
  if (missing.length > 0) throw new Error(`${eventName} needs ${missing.join(", ")}`);
  const topics = encodeEventTopics({ abi: [event], eventName, args });
  const data = encodeAbiParameters(
    unindexed,
    unindexed.map((input) => args[input.name!]),
  );
  const blockNumber = position.blockNumber ?? 1n;
  const transactionIndex = position.transactionIndex ?? 0;
  return {
    address: position.address,
    topics: topics as Log["topics"],
    data,
    blockNumber,
    blockHash: keccak256(toHex(blockNumber)),
    transactionIndex,
    transactionHash: keccak256(toHex(`${blockNumber}:${transactionIndex}`)),
    logIndex: position.logIndex,
    removed: false,
  };
}
