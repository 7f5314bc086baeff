import { decodeAbiParameters, toEventSelector, type Hex } from "viem";

/** The logs that change a holding: ERC-20 and ERC-721 `Transfer`, ERC-1155 `TransferSingle` and `TransferBatch`. */
export const TRANSFER_TOPIC = toEventSelector("Transfer(address,address,uint256)");
export const TRANSFER_SINGLE_TOPIC = toEventSelector("TransferSingle(address,address,address,uint256,uint256)");
export const TRANSFER_BATCH_TOPIC = toEventSelector("TransferBatch(address,address,address,uint256[],uint256[])");
export const HOLDING_TOPICS: readonly Hex[] = [TRANSFER_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];

/** A log as `eth_getLogs` answers it. */
export interface RpcLog {
  address: string;
  topics: readonly string[];
  data: string;
}

/** Whose holding a log may have changed: the contract, both sides, and the ERC-1155 ids (undefined: any id). */
export interface TouchedHolding {
  asset: string;
  owners: readonly string[];
  tokenIds: readonly bigint[] | undefined;
}

const topicAddress = (topic: string | undefined): string | undefined =>
  topic === undefined || topic.length !== 66 ? undefined : `0x${topic.slice(26)}`.toLowerCase();

/**
 * What `log` touches, or undefined for a log that is none of the three transfers or names no owners. A hostile
 * contract can emit anything: a touched holding is only read again, and a change is what the read finds.
 * Addresses come out lower-case.
 */
export function touchedBy(log: RpcLog): TouchedHolding | undefined {
  const asset = log.address.toLowerCase();
  const [topic0] = log.topics;
  if (topic0 === TRANSFER_TOPIC) {
    const owners = [topicAddress(log.topics[1]), topicAddress(log.topics[2])];
    if (owners.includes(undefined)) return undefined;
    return { asset, owners: owners as string[], tokenIds: undefined };
  }
  if (topic0 === TRANSFER_SINGLE_TOPIC || topic0 === TRANSFER_BATCH_TOPIC) {
    const owners = [topicAddress(log.topics[2]), topicAddress(log.topics[3])];
    if (owners.includes(undefined)) return undefined;
    try {
      const tokenIds =
        topic0 === TRANSFER_SINGLE_TOPIC
          ? [decodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], log.data as Hex)[0]]
          : [...decodeAbiParameters([{ type: "uint256[]" }, { type: "uint256[]" }], log.data as Hex)[0]];
      return { asset, owners: owners as string[], tokenIds };
    } catch {
      // Data that does not decode: every watched id of both owners is read again.
      return { asset, owners: owners as string[], tokenIds: undefined };
    }
  }
  return undefined;
}
