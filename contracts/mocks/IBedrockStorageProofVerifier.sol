// SPDX-License-Identifier: MIT
// ^0.8.15: the Bedrock reference verifier, compiled by solc 0.8.15 for Optimism Bedrock's libraries, imports it.
// solhint-disable-next-line compiler-version
pragma solidity ^0.8.15;

import { IL1Block } from "@avn/contracts/interfaces/IL1Block.sol";
import { IL1BlockHashes } from "@avn/contracts/interfaces/IL1BlockHashes.sol";

/// @title IBedrockStorageProofVerifier
/// @notice The interface of issue 33's storage proof verifier, frozen with {BedrockStorageProofVerifier}, the
/// reference that the benchmarks and the differential fuzzing compare the new {IStorageProofVerifier} with.
/// Verifies, on an OP-stack L2, a Merkle proof of an owner's ERC-20 or ERC-721 balance on L1 against an
/// L1 block hash the L2 knows (the `L1Block` predeploy's current block, or one recorded in `L1BlockHashes`).
/// Trustless: no node, quorum or key stands behind the answer, only L1's state root. The caller names the
/// token's balances mapping slot (OpenZeppelin's ERC-20: 0, ERC-721: 3), and the verifier derives the storage
/// key from it and the owner itself, so a proof of any other slot cannot pass.
interface IBedrockStorageProofVerifier {
    /// @notice A balance proof, passed ABI-encoded (`abi.encode(proof)`) to `verifyBalance`.
    /// @custom:field header The RLP-encoded L1 block header, whose keccak256 is the block's hash.
    /// @custom:field accountProof The token account's proof nodes (`eth_getProof`'s `accountProof`).
    /// @custom:field storageProof The balance slot's proof nodes (`eth_getProof`'s `storageProof[0].proof`).
    struct BalanceProof {
        bytes header;
        bytes[] accountProof;
        bytes[] storageProof;
    }

    /// @notice Thrown when a constructor argument is zero.
    error BedrockStorageProofVerifier_ZeroAddress();

    /// @notice Thrown when the `L1BlockHashes` given records another contract's blocks than the `L1Block` given.
    error BedrockStorageProofVerifier_L1BlockMismatch(address hashesL1Block, address l1Block);

    /// @notice Thrown when `proof` is not an ABI-encoded `BalanceProof`.
    error BedrockStorageProofVerifier_MalformedProof();

    /// @notice Thrown when the proof's header is not an RLP list with a 32-byte state root (field 3) and a
    /// number (field 8) and timestamp (field 11) of at most 8 bytes.
    error BedrockStorageProofVerifier_MalformedHeader();

    /// @notice Thrown when the L2 knows no hash of the header's block: not recorded in `L1BlockHashes` and
    /// not the `L1Block` predeploy's current block.
    error BedrockStorageProofVerifier_UnknownBlock(uint256 blockNumber);

    /// @notice Thrown when the header's keccak256 is not the hash the L2 knows for its block number.
    error BedrockStorageProofVerifier_HeaderHashMismatch(uint256 blockNumber, bytes32 knownHash, bytes32 headerHash);

    /// @notice Thrown when the header's block is more than `maxAge` seconds older than the L2 block.
    error BedrockStorageProofVerifier_StaleHeader(uint256 blockTimestamp, uint256 maxAge);

    /// @notice Thrown when the account proof does not prove the token's account under the header's state root
    /// (or proves a value that is not an account). `reason` is what the trie library reverted with.
    error BedrockStorageProofVerifier_AccountProofInvalid(address token, bytes reason);

    /// @notice Thrown when the storage proof does not prove a value of the owner's balance slot under the
    /// token's storage root: a corrupt proof, a proof of another slot or owner, or a slot never written. The
    /// trie library proves inclusion only, so a zero balance (no slot in the trie) cannot be proven and also
    /// lands here. `reason` is what the trie library reverted with.
    error BedrockStorageProofVerifier_SlotNotProven(address token, bytes32 storageKey, bytes reason);

    /// @notice The record of L1 block hashes checked for blocks other than the current one.
    function L1_BLOCK_HASHES() external view returns (IL1BlockHashes);

    /// @notice The `L1Block` predeploy, whose current block can be proven against without a record.
    function L1_BLOCK() external view returns (IL1Block);

    /// @notice Verifies a proof that `owner` holds `balance` of `token` on L1 at block `l1BlockNumber`, and
    /// returns it. Reverts with the error that names what failed.
    /// @param token The ERC-20 or ERC-721 on L1 (the proxy's address for a proxied token).
    /// @param owner The holder.
    /// @param balancesSlot The storage slot of the token's `mapping(address => uint256)` of balances.
    /// @param maxAge How old, in seconds, the proven L1 block may be, measured against this L2 block.
    /// @param proof `abi.encode(BalanceProof)`.
    /// @return balance The owner's balance (the slot's value).
    /// @return l1BlockNumber The L1 block the balance was proven at.
    function verifyBalance(address token, address owner, uint256 balancesSlot, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (uint256 balance, uint256 l1BlockNumber);

    /// @notice Decodes `proof` (`abi.encode(BalanceProof)`) and reads its RLP block header's state root (field 3),
    /// number (field 8) and timestamp (field 11). A step of `verifyBalance`, called on itself so that its reverts
    /// are caught and named: without data, or with Panic(0x41) for a length or count word beyond any memory,
    /// when `proof` is not an ABI-encoded `BalanceProof`; with other data (the RLP library's error, an index panic,
    /// `BedrockStorageProofVerifier_MalformedHeader`) when its header is malformed.
    function readProofHeader(bytes calldata proof)
        external
        pure
        returns (bytes32 stateRoot, uint256 blockNumber, uint256 blockTimestamp);

    /// @notice The storage root of `token`'s account, proven under `stateRoot` by `accountProof`. A step of
    /// `verifyBalance`, called on itself so that the trie library's reverts are caught and named.
    function proveAccount(address token, bytes32 stateRoot, bytes[] calldata accountProof)
        external
        pure
        returns (bytes32 storageRoot);

    /// @notice The value of storage slot `storageKey`, proven under `storageRoot` by `storageProof`. A step of
    /// `verifyBalance`, called on itself so that the trie library's reverts are caught and named.
    function proveSlot(bytes32 storageKey, bytes32 storageRoot, bytes[] calldata storageProof)
        external
        pure
        returns (uint256 value);
}
