// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IL1Block } from "./IL1Block.sol";
import { IL1BlockHashes } from "./IL1BlockHashes.sol";

/// @title IStorageProofVerifier
/// @notice Verifies, on an OP-stack L2, Merkle proofs of L1 storage (any slot of any account, or an owner's
/// ERC-20 or ERC-721 balance) against an L1 block hash the L2 knows: the `L1Block` predeploy's current block, one
/// recorded in `L1BlockHashes`, or, through EIP-2935's history contract, any of the 8,191 blocks before one of
/// those. Trustless: no node, quorum or key stands behind the answer, only L1's state root. A slot never written
/// is proven absent (its value is 0), and each slot's proof says which it proves: inclusion or exclusion.
interface IStorageProofVerifier {
    /// @notice A proof, passed ABI-encoded (`abi.encode(proof)`) as the `proof` argument.
    /// @custom:field header The RLP-encoded header of the L1 block proven at, whose keccak256 is its hash.
    /// @custom:field accountProof The account's proof nodes (`eth_getProof`'s `accountProof`).
    /// @custom:field slotProofs One per slot asked, in the same order (`eth_getProof`'s `storageProof`).
    /// @custom:field history Empty (an empty `anchorHeader`) when the L2 knows `header`'s hash itself; else how an
    /// anchor block the L2 knows proves `header`'s hash.
    struct StorageProof {
        bytes header;
        bytes[] accountProof;
        SlotProof[] slotProofs;
        HistoryProof history;
    }

    /// @notice The proof of one storage slot.
    /// @custom:field included True when the proof claims the slot is in the storage trie (a nonzero value), false
    /// when it claims the slot is absent (never written, or zeroed: the value is 0). The verifier checks the claim.
    /// @custom:field nodes The slot's proof nodes, root first.
    struct SlotProof {
        bool included;
        bytes[] nodes;
    }

    /// @notice How a block the L2 knows (the anchor) proves an older block's hash: EIP-2935's history contract
    /// holds the hash of block `b` in slot `b % 8191` for the 8,191 blocks before the current one.
    /// @custom:field anchorHeader The RLP-encoded header of the anchor block, whose hash the L2 knows.
    /// @custom:field accountProof The history contract's account proof under the anchor's state root.
    /// @custom:field slotProof The proof of slot `number % 8191` of the history contract, which holds the proven
    /// header's hash.
    struct HistoryProof {
        bytes anchorHeader;
        bytes[] accountProof;
        bytes[] slotProof;
    }

    /// @notice Why a trie proof failed, in `StorageProofVerifier_AccountProofInvalid` and `..._SlotProofInvalid`.
    enum TrieFault {
        None,
        /// The nodes end before the key's leaf, or before the point where the key leaves the trie.
        ProofTooShort,
        /// Nodes follow the one that decided the walk.
        ProofTooLong,
        /// Node `node`'s keccak256 is not the hash that its parent (or the root) names.
        HashMismatch,
        /// Node `node` is not a trie node, or its value is not what the trie holds (an account, a slot's word).
        MalformedNode
    }

    /// @notice Thrown when a constructor argument is zero.
    error StorageProofVerifier_ZeroAddress();

    /// @notice Thrown when the `L1BlockHashes` given records another contract's blocks than the `L1Block` given.
    error StorageProofVerifier_L1BlockMismatch(address hashesL1Block, address l1Block);

    /// @notice Thrown when `proof` is not an ABI-encoded `StorageProof` (an offset or a length points outside it).
    error StorageProofVerifier_MalformedProof();

    /// @notice Thrown when a header is not an RLP list with a 32-byte state root (field 3) and a number
    /// (field 8) and timestamp (field 11) of at most 8 bytes.
    error StorageProofVerifier_MalformedHeader();

    /// @notice Thrown when the L2 knows no hash of the block: not recorded in `L1BlockHashes` and not the
    /// `L1Block` predeploy's current block.
    error StorageProofVerifier_UnknownBlock(uint256 blockNumber);

    /// @notice Thrown when a header's keccak256 is not the hash the L2 knows for its block number.
    error StorageProofVerifier_HeaderHashMismatch(uint256 blockNumber, bytes32 knownHash, bytes32 headerHash);

    /// @notice Thrown when the proven block is more than `maxAge` seconds older than the L2 block.
    error StorageProofVerifier_StaleHeader(uint256 blockTimestamp, uint256 maxAge);

    /// @notice Thrown when a history proof names a block that is not among the 8,191 before its anchor.
    error StorageProofVerifier_HistoryOutOfRange(uint256 blockNumber, uint256 anchorNumber);

    /// @notice Thrown when the history contract's slot for `blockNumber` holds another hash than the header's.
    error StorageProofVerifier_HistoryHashMismatch(uint256 blockNumber, bytes32 recordedHash, bytes32 headerHash);

    /// @notice Thrown when the account at the history contract's address does not have its code.
    error StorageProofVerifier_HistoryContractMismatch(bytes32 codeHash);

    /// @notice Thrown when the account proof does not prove `account` under the state root, at proof node `node`.
    error StorageProofVerifier_AccountProofInvalid(address account, TrieFault fault, uint256 node);

    /// @notice Thrown when the account proof proves that `account` does not exist at the block.
    error StorageProofVerifier_AccountAbsent(address account);

    /// @notice Thrown when a slot's proof does not prove its value or its absence under the account's storage root,
    /// at proof node `node`.
    error StorageProofVerifier_SlotProofInvalid(address account, bytes32 slot, TrieFault fault, uint256 node);

    /// @notice Thrown when a slot's proof is valid but proves the other case than it claims: an inclusion proof
    /// whose leaf is another key's (the slot is absent), or an exclusion proof of a slot that is present.
    error StorageProofVerifier_InclusionClaimMismatch(address account, bytes32 slot, bool claimedIncluded);

    /// @notice Thrown when the proof does not hold exactly one slot proof per slot asked.
    error StorageProofVerifier_SlotCountMismatch(uint256 slotsAsked, uint256 slotProofs);

    /// @notice The record of L1 block hashes checked for blocks other than the current one.
    function L1_BLOCK_HASHES() external view returns (IL1BlockHashes);

    /// @notice The `L1Block` predeploy, whose current block can be proven against without a record.
    function L1_BLOCK() external view returns (IL1Block);

    /// @notice Verifies a proof that `owner` holds `balance` of `token` on L1 at block `l1BlockNumber`, and
    /// returns it. Reverts with the error that names what failed.
    /// @param token The ERC-20 or ERC-721 on L1 (the proxy's address for a proxied token).
    /// @param owner The holder.
    /// @param balancesSlot The storage slot of the token's `mapping(address => uint256)` of balances
    /// (OpenZeppelin's ERC-20: 0, ERC-721: 3). The verifier derives the owner's slot from it, so a proof of any
    /// other slot cannot pass.
    /// @param maxAge How old, in seconds, the proven L1 block may be, measured against this L2 block.
    /// @param proof `abi.encode(StorageProof)` with one slot proof.
    /// @return balance The owner's balance (the slot's value; 0 with an exclusion proof).
    /// @return l1BlockNumber The L1 block the balance was proven at (for a history proof, the old block).
    function verifyBalance(address token, address owner, uint256 balancesSlot, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (uint256 balance, uint256 l1BlockNumber);

    /// @notice `verifyBalance` for several owners of one token under one account proof (a party of players).
    /// @param proof `abi.encode(StorageProof)` with one slot proof per owner, in the order of `owners`.
    /// @return balances The owners' balances, in the order of `owners`.
    /// @return l1BlockNumber The L1 block the balances were proven at.
    function verifyBalances(
        address token,
        address[] calldata owners,
        uint256 balancesSlot,
        uint256 maxAge,
        bytes calldata proof
    ) external view returns (uint256[] memory balances, uint256 l1BlockNumber);

    /// @notice Verifies the values of storage slots of an L1 account at an L1 block, and returns them.
    /// @param account The L1 account.
    /// @param slots The storage slots (the 32-byte slot numbers, not their hashes).
    /// @param maxAge How old, in seconds, the proven L1 block may be, measured against this L2 block.
    /// @param proof `abi.encode(StorageProof)` with one slot proof per slot, in the order of `slots`.
    /// @return values The slots' values (0 for a slot proven absent).
    /// @return l1BlockNumber The L1 block the values were proven at.
    function verifyStorage(address account, bytes32[] calldata slots, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (bytes32[] memory values, uint256 l1BlockNumber);
}
