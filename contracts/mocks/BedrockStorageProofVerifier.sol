// SPDX-License-Identifier: MIT
// Pinned to the 0.8.15 compiler that Optimism Bedrock's libraries require (their RLPErrors.sol pins
// `pragma solidity 0.8.15` exactly); hardhat.config.ts compiles this file alone with it. Lint exception:
// solhint-disable-next-line compiler-version
pragma solidity 0.8.15;

import { RLPReader } from "@eth-optimism/contracts-bedrock/src/libraries/rlp/RLPReader.sol";
import { MerkleTrie } from "@eth-optimism/contracts-bedrock/src/libraries/trie/MerkleTrie.sol";
import { SecureMerkleTrie } from "@eth-optimism/contracts-bedrock/src/libraries/trie/SecureMerkleTrie.sol";
import { IL1Block } from "@avn/contracts/interfaces/IL1Block.sol";
import { IL1BlockHashes } from "@avn/contracts/interfaces/IL1BlockHashes.sol";
import { IBedrockStorageProofVerifier } from "./IBedrockStorageProofVerifier.sol";

/// @title BedrockStorageProofVerifier
/// @notice The storage proof verifier of issue 33, replaced by {StorageProofVerifier} (issue 49) and kept, as it
/// was, for two jobs only: the reference that `npm run bench:gas` measures the new verifier against, side by side,
/// and (through `trieGet`) the Bedrock `MerkleTrie` that `npm run fuzz:mpt` checks `CalldataMpt`
/// against. Not deployed by any deployment. See {IBedrockStorageProofVerifier}.
/// @dev The Merkle-Patricia trie and RLP code is Optimism Bedrock's (`MerkleTrie`, `SecureMerkleTrie`,
/// `RLPReader` of the contracts-bedrock 0.17.3 npm package), imported from the package as it is. Its
/// `RLPErrors.sol` pins the compiler to exactly 0.8.15, so this contract is compiled by solc 0.8.15 (a second
/// compiler in hardhat.config.ts) and the rest of the project reaches it through {IBedrockStorageProofVerifier}. Those libraries
/// revert with strings and their own errors that do not say which part of a proof failed, so each step that
/// runs them is an external call to this contract itself (`readProofHeader`, `proveAccount`, `proveSlot`) whose
/// revert is caught and named. Holds no state and has no admin.
contract BedrockStorageProofVerifier is IBedrockStorageProofVerifier {
    using RLPReader for RLPReader.RLPItem;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @dev Header fields read (0-based), the same from the Frontier header to Prague's.
    uint256 private constant _HEADER_STATE_ROOT = 3;
    uint256 private constant _HEADER_NUMBER = 8;
    uint256 private constant _HEADER_TIMESTAMP = 11;

    /// @dev keccak256 of the revert data of Panic(0x41), the compiler's "too much memory" panic.
    bytes32 private constant _PANIC_MEMORY_HASH = keccak256(abi.encodeWithSignature("Panic(uint256)", 0x41));

    /// @dev An account is `[nonce, balance, storageRoot, codeHash]`.
    uint256 private constant _ACCOUNT_FIELDS = 4;
    uint256 private constant _ACCOUNT_STORAGE_ROOT = 2;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IBedrockStorageProofVerifier
    IL1BlockHashes public immutable L1_BLOCK_HASHES;

    /// @inheritdoc IBedrockStorageProofVerifier
    IL1Block public immutable L1_BLOCK;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param l1BlockHashes The record of older L1 block hashes.
    /// @param l1Block The `L1Block` predeploy; it must be the one `l1BlockHashes` records from, so that the
    /// current block and the recorded ones come from the same source.
    constructor(IL1BlockHashes l1BlockHashes, IL1Block l1Block) {
        if (address(l1BlockHashes) == address(0) || address(l1Block) == address(0)) {
            revert BedrockStorageProofVerifier_ZeroAddress();
        }
        address recorded = address(l1BlockHashes.L1_BLOCK());
        if (recorded != address(l1Block)) revert BedrockStorageProofVerifier_L1BlockMismatch(recorded, address(l1Block));
        L1_BLOCK_HASHES = l1BlockHashes;
        L1_BLOCK = l1Block;
    }

    /*//////////////////////////////////////////////////////////////
                               EXTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IBedrockStorageProofVerifier
    /// @dev A step that runs out of gas is caught like a failing one: with too little gas the named error can be
    /// the wrong one, never a wrong balance.
    function verifyBalance(address token, address owner, uint256 balancesSlot, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (uint256 balance, uint256 l1BlockNumber)
    {
        // The encoding and the header are read in one call to this contract. A malformed encoding makes
        // `abi.decode` revert without data, or with Panic(0x41) when a length or count word asks for more memory
        // than can exist (the decoder allocates before it checks bounds); a malformed header reverts with the RLP
        // library's errors, an index panic or ours, never 0x41 (its lengths are bounded by the header's, which
        // fits in calldata). Once the encoding decodes there, every offset and length in it lies within `proof`,
        // and its parts are read here where they are, in calldata.
        bytes32 stateRoot;
        uint256 blockTimestamp;
        try this.readProofHeader(proof) returns (bytes32 root, uint256 number, uint256 timestamp) {
            (stateRoot, l1BlockNumber, blockTimestamp) = (root, number, timestamp);
        } catch (bytes memory reason) {
            if (reason.length == 0 || keccak256(reason) == _PANIC_MEMORY_HASH) revert BedrockStorageProofVerifier_MalformedProof();
            revert BedrockStorageProofVerifier_MalformedHeader();
        }
        BalanceProof calldata decoded = _inCalldata(proof);

        // The header is only trusted once its hash is one the L2 knows for its number.
        bytes32 knownHash = _knownHash(l1BlockNumber);
        bytes32 headerHash = keccak256(decoded.header);
        if (headerHash != knownHash) revert BedrockStorageProofVerifier_HeaderHashMismatch(l1BlockNumber, knownHash, headerHash);
        // An L1 header cannot be newer than the L2 block that knows its hash; the first test keeps the subtraction
        // from underflowing should a chain's clocks disagree.
        if (block.timestamp > blockTimestamp && block.timestamp - blockTimestamp > maxAge) {
            revert BedrockStorageProofVerifier_StaleHeader(blockTimestamp, maxAge);
        }

        bytes32 storageRoot;
        try this.proveAccount(token, stateRoot, decoded.accountProof) returns (bytes32 root) {
            storageRoot = root;
        } catch (bytes memory reason) {
            revert BedrockStorageProofVerifier_AccountProofInvalid(token, reason);
        }

        // The key is derived here, never read from the proof: a proof of any other slot (totalSupply, another
        // owner's balance, another mapping) proves a different key and fails.
        bytes32 storageKey = keccak256(abi.encode(owner, balancesSlot));
        try this.proveSlot(storageKey, storageRoot, decoded.storageProof) returns (uint256 value) {
            balance = value;
        } catch (bytes memory reason) {
            revert BedrockStorageProofVerifier_SlotNotProven(token, storageKey, reason);
        }
    }

    /// @inheritdoc IBedrockStorageProofVerifier
    function readProofHeader(bytes calldata proof)
        external
        pure
        returns (bytes32 stateRoot, uint256 blockNumber, uint256 blockTimestamp)
    {
        bytes memory header = abi.decode(proof, (BalanceProof)).header;
        RLPReader.RLPItem[] memory fields = RLPReader.readList(header);
        // Index out of range (a list too short to be a header) panics, which the caller catches as malformed.
        bytes memory root = fields[_HEADER_STATE_ROOT].readBytes();
        if (root.length != 32) revert BedrockStorageProofVerifier_MalformedHeader();
        stateRoot = bytes32(root);
        blockNumber = _toUint(fields[_HEADER_NUMBER].readBytes(), 8);
        blockTimestamp = _toUint(fields[_HEADER_TIMESTAMP].readBytes(), 8);
    }

    /// @inheritdoc IBedrockStorageProofVerifier
    function proveAccount(address token, bytes32 stateRoot, bytes[] calldata accountProof)
        external
        pure
        returns (bytes32 storageRoot)
    {
        bytes memory account = SecureMerkleTrie.get(abi.encodePacked(token), accountProof, stateRoot);
        // A value proven under a real state root is an account; these checks only refuse a made-up trie.
        RLPReader.RLPItem[] memory fields = RLPReader.readList(account);
        if (fields.length != _ACCOUNT_FIELDS) revert BedrockStorageProofVerifier_AccountProofInvalid(token, "");
        bytes memory root = fields[_ACCOUNT_STORAGE_ROOT].readBytes();
        if (root.length != 32) revert BedrockStorageProofVerifier_AccountProofInvalid(token, "");
        storageRoot = bytes32(root);
    }

    /// @inheritdoc IBedrockStorageProofVerifier
    function proveSlot(bytes32 storageKey, bytes32 storageRoot, bytes[] calldata storageProof)
        external
        pure
        returns (uint256 value)
    {
        // The trie holds each slot's value as the RLP string of its big-endian bytes, leading zeros stripped.
        bytes memory stored = SecureMerkleTrie.get(abi.encode(storageKey), storageProof, storageRoot);
        value = _toUint(RLPReader.readBytes(stored), 32);
    }

    /// @notice Bedrock's `MerkleTrie.get` as it is (what `SecureMerkleTrie.get` calls once it hashed the key): the
    /// value stored under the 32-byte path `key` in the trie of root `root`, or a revert, for the differential fuzzing
    /// of `CalldataMpt`, which takes the path hashed too. Bedrock proves inclusion only.
    function trieGet(bytes32 key, bytes[] calldata proof, bytes32 root) external pure returns (bytes memory value) {
        value = MerkleTrie.get(abi.encodePacked(key), proof, root);
    }

    /// @notice `trieGet` of many cases in one call (each through a call to itself, whose revert is caught): whether
    /// each found a value, and the values.
    function trieGetMany(bytes32[] calldata keys, bytes[][] calldata proofs, bytes32[] calldata roots)
        external
        view
        returns (bool[] memory found, bytes[] memory values)
    {
        found = new bool[](keys.length);
        values = new bytes[](keys.length);
        for (uint256 i = 0; i < keys.length; ++i) {
            try this.trieGet(keys[i], proofs[i], roots[i]) returns (bytes memory value) {
                (found[i], values[i]) = (true, value);
            } catch {
                found[i] = false;
            }
        }
    }

    /*//////////////////////////////////////////////////////////////
                                PRIVATE
    //////////////////////////////////////////////////////////////*/

    /// @dev The hash the L2 knows for L1 block `number`: the current block's from the predeploy (no record
    /// needed for a fresh proof), else the recorded one. Reverts when it knows none.
    function _knownHash(uint256 number) private view returns (bytes32 hash) {
        // `number` came from at most 8 bytes, so it fits a uint64.
        if (number == L1_BLOCK.number()) return L1_BLOCK.hash();
        (hash,) = L1_BLOCK_HASHES.hashOf(uint64(number));
        if (hash == bytes32(0)) revert BedrockStorageProofVerifier_UnknownBlock(number);
    }

    /// @dev `proof`, an `abi.encode(BalanceProof)` that `readProofHeader` decoded, as a calldata struct: its
    /// first word is the struct's offset within `proof`, and a calldata struct is the position of its head. The
    /// compiler bounds-checks each member read against the calldata, and the decoding in `readProofHeader`
    /// already held them within `proof`.
    function _inCalldata(bytes calldata proof) private pure returns (BalanceProof calldata decoded) {
        // solhint-disable-next-line no-inline-assembly
        assembly {
            decoded := add(proof.offset, calldataload(proof.offset))
        }
    }

    /// @dev The big-endian unsigned integer `data` holds, refusing more than `maxBytes` bytes.
    function _toUint(bytes memory data, uint256 maxBytes) private pure returns (uint256 value) {
        uint256 length = data.length;
        if (length > maxBytes) revert BedrockStorageProofVerifier_MalformedProof();
        for (uint256 i = 0; i < length; ++i) {
            value = (value << 8) | uint8(data[i]);
        }
    }
}
