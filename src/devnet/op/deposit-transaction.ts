import { AbiCoder, concat, dataSlice, encodeRlp, getAddress, keccak256, toBeArray, toBeHex, toNumber, type Log } from "ethers";

/** `TransactionDeposited(address indexed from, address indexed to, uint256 indexed version, bytes opaqueData)`. */
export const TRANSACTION_DEPOSITED_TOPIC = keccak256(new TextEncoder().encode("TransactionDeposited(address,address,uint256,bytes)"));
const DEPOSIT_TX_TYPE = "0x7e";
const USER_DEPOSIT_DOMAIN = 0n;

/** An L2 deposit transaction (OP deposit spec, type 0x7e), derived from one portal event. */
export interface DepositTransaction {
  sourceHash: string;
  from: string;
  /** `null` for a contract creation. */
  to: string | null;
  mint: bigint;
  value: bigint;
  gas: bigint;
  data: string;
  /** Where on L1 it came from, for ordering and logs. */
  l1BlockNumber: number;
  l1LogIndex: number;
}

/**
 * Turns a `TransactionDeposited` log of the OptimismPortal into the deposit transaction op-node derives
 * from it: `from` as emitted (already aliased for contract callers), `opaqueData` unpacked as
 * `abi.encodePacked(uint256 mint, uint256 value, uint64 gas, bool isCreation, bytes data)`, and the
 * user-deposit source hash `keccak256(bytes32(0) ‖ keccak256(l1BlockHash ‖ uint256(logIndex)))`.
 */
export function depositFromLog(log: Log): DepositTransaction {
  if (log.topics[0] !== TRANSACTION_DEPOSITED_TOPIC) throw new Error(`log ${log.index} is not a TransactionDeposited event`);
  const version = BigInt(log.topics[3]);
  if (version !== 0n) throw new Error(`unknown deposit version ${version} in L1 block ${log.blockNumber}, log ${log.index}`);
  const [opaque] = AbiCoder.defaultAbiCoder().decode(["bytes"], log.data) as unknown as [string];
  const isCreation = BigInt(dataSlice(opaque, 72, 73)) !== 0n;
  const to = getAddress(dataSlice(log.topics[2], 12));
  const depositId = keccak256(concat([log.blockHash, toBeHex(log.index, 32)]));
  return {
    sourceHash: keccak256(concat([toBeHex(USER_DEPOSIT_DOMAIN, 32), depositId])),
    from: getAddress(dataSlice(log.topics[1], 12)),
    to: isCreation ? null : to,
    mint: BigInt(dataSlice(opaque, 0, 32)),
    value: BigInt(dataSlice(opaque, 32, 64)),
    gas: BigInt(dataSlice(opaque, 64, 72)),
    data: dataSlice(opaque, 73),
    l1BlockNumber: log.blockNumber,
    l1LogIndex: toNumber(log.index),
  };
}

/** The signed-transaction bytes of a deposit: `0x7e ‖ rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])`. */
export function serializeDeposit(deposit: DepositTransaction): string {
  return concat([
    DEPOSIT_TX_TYPE,
    encodeRlp([
      deposit.sourceHash,
      deposit.from,
      deposit.to ?? "0x",
      toBeArray(deposit.mint),
      toBeArray(deposit.value),
      toBeArray(deposit.gas),
      "0x", // isSystemTx = false: user deposits are never system transactions
      deposit.data,
    ]),
  ]);
}

/** The L2 transaction hash of a deposit: known before it is sent, which makes relaying idempotent. */
export function depositHash(deposit: DepositTransaction): string {
  return keccak256(serializeDeposit(deposit));
}
