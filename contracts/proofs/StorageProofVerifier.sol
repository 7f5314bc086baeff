// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IL1Block } from "@avn/contracts/interfaces/IL1Block.sol";
import { IL1BlockHashes } from "@avn/contracts/interfaces/IL1BlockHashes.sol";
import { IStorageProofVerifier } from "@avn/contracts/interfaces/IStorageProofVerifier.sol";
import { CalldataMpt } from "./CalldataMpt.sol";

/// @title StorageProofVerifier
/// @notice See {IStorageProofVerifier}.
/// @dev Reads the proof where it lies in calldata: the headers' fields, the trie nodes ({CalldataMpt}) and the
/// values are read in place, never copied into memory item by item, which is what made the first verifier
/// (Bedrock's `SecureMerkleTrie`, kept as `BedrockStorageProofVerifier` for comparison) cost 20-25k gas per node.
/// `_inCalldata` first checks that every offset and length of the encoding lies within `proof`, so that the
/// struct's parts are read from it alone. Holds no state and has no admin.
contract StorageProofVerifier is IStorageProofVerifier {
    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @dev Header fields read (0-based), the same from the Frontier header to Prague's.
    uint256 private constant _HEADER_STATE_ROOT = 3;
    uint256 private constant _HEADER_NUMBER = 8;
    uint256 private constant _HEADER_TIMESTAMP = 11;

    /// @dev EIP-2935's history contract, at the same address on every chain that runs Prague's rules: it keeps
    /// the hash of block `b` in slot `b % HISTORY_SERVE_WINDOW` while `b` is among the last 8,191 blocks.
    address private constant _HISTORY_CONTRACT = 0x0000F90827F1C53a10cb7A02335B175320002935;
    uint256 private constant _HISTORY_SERVE_WINDOW = 8191;
    /// @dev keccak256 of EIP-2935's runtime code: the account proven at that address must be that contract.
    bytes32 private constant _HISTORY_CODE_HASH = 0x6e49e66782037c0555897870e29fa5e552daf4719552131a0abce779daec0a5d;

    /// @dev Bounds no real encoding comes near, so that offset arithmetic cannot overflow.
    uint256 private constant _MAX_WORD = 0xffffffff;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStorageProofVerifier
    IL1BlockHashes public immutable L1_BLOCK_HASHES;

    /// @inheritdoc IStorageProofVerifier
    IL1Block public immutable L1_BLOCK;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param l1BlockHashes The record of older L1 block hashes.
    /// @param l1Block The `L1Block` predeploy; it must be the one `l1BlockHashes` records from, so that the
    /// current block and the recorded ones come from the same source.
    constructor(IL1BlockHashes l1BlockHashes, IL1Block l1Block) {
        if (address(l1BlockHashes) == address(0) || address(l1Block) == address(0)) {
            revert StorageProofVerifier_ZeroAddress();
        }
        address recorded = address(l1BlockHashes.L1_BLOCK());
        if (recorded != address(l1Block)) revert StorageProofVerifier_L1BlockMismatch(recorded, address(l1Block));
        L1_BLOCK_HASHES = l1BlockHashes;
        L1_BLOCK = l1Block;
    }

    /*//////////////////////////////////////////////////////////////
                               EXTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStorageProofVerifier
    function verifyBalance(address token, address owner, uint256 balancesSlot, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (uint256 balance, uint256 l1BlockNumber)
    {
        bytes32[] memory slots = new bytes32[](1);
        slots[0] = _balanceSlot(owner, balancesSlot);
        bytes32[] memory values;
        (values, l1BlockNumber) = _verify(token, slots, maxAge, proof);
        balance = uint256(values[0]);
    }

    /// @inheritdoc IStorageProofVerifier
    function verifyBalances(
        address token,
        address[] calldata owners,
        uint256 balancesSlot,
        uint256 maxAge,
        bytes calldata proof
    ) external view returns (uint256[] memory balances, uint256 l1BlockNumber) {
        uint256 count = owners.length;
        bytes32[] memory slots = new bytes32[](count);
        for (uint256 i = 0; i < count; ++i) {
            slots[i] = _balanceSlot(owners[i], balancesSlot);
        }
        bytes32[] memory values;
        (values, l1BlockNumber) = _verify(token, slots, maxAge, proof);
        // A bytes32 array and a uint256 array of one length have one layout.
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            balances := values
        }
    }

    /// @inheritdoc IStorageProofVerifier
    function verifyStorage(address account, bytes32[] calldata slots, uint256 maxAge, bytes calldata proof)
        external
        view
        returns (bytes32[] memory values, uint256 l1BlockNumber)
    {
        return _verify(account, slots, maxAge, proof);
    }

    /*//////////////////////////////////////////////////////////////
                                PRIVATE
    //////////////////////////////////////////////////////////////*/

    /// @dev The values of `slots` of `account` at the block `proof` proves, and that block's number.
    function _verify(address account, bytes32[] memory slots, uint256 maxAge, bytes calldata proof)
        private
        view
        returns (bytes32[] memory values, uint256 blockNumber)
    {
        StorageProof calldata decoded = _inCalldata(proof);
        bytes32 stateRoot;
        uint256 blockTimestamp;
        (stateRoot, blockNumber, blockTimestamp) = _readHeader(decoded.header);
        bytes32 headerHash = _hash(decoded.header);
        if (decoded.history.anchorHeader.length == 0) {
            // The header is only trusted once its hash is one the L2 knows for its number.
            bytes32 knownHash = _knownHash(blockNumber);
            if (headerHash != knownHash) revert StorageProofVerifier_HeaderHashMismatch(blockNumber, knownHash, headerHash);
        } else {
            _checkHistory(decoded.history, blockNumber, headerHash);
        }
        if (_age(blockTimestamp) > maxAge) revert StorageProofVerifier_StaleHeader(blockTimestamp, maxAge);

        (bytes32 storageRoot,) = _proveAccount(account, stateRoot, decoded.accountProof);
        uint256 count = slots.length;
        if (decoded.slotProofs.length != count) revert StorageProofVerifier_SlotCountMismatch(count, decoded.slotProofs.length);
        values = new bytes32[](count);
        for (uint256 i = 0; i < count; ++i) {
            values[i] = _proveSlot(account, storageRoot, slots[i], decoded.slotProofs[i]);
        }
    }

    /// @dev Checks, through EIP-2935's history contract at the anchor block (one the L2 knows), that `headerHash`
    /// is the hash of block `blockNumber`, one of the 8,191 blocks before the anchor.
    function _checkHistory(HistoryProof calldata history, uint256 blockNumber, bytes32 headerHash) private view {
        (bytes32 anchorRoot, uint256 anchorNumber,) = _readHeader(history.anchorHeader);
        bytes32 anchorHash = _hash(history.anchorHeader);
        bytes32 knownHash = _knownHash(anchorNumber);
        if (anchorHash != knownHash) revert StorageProofVerifier_HeaderHashMismatch(anchorNumber, knownHash, anchorHash);
        // The contract holds the hashes of blocks anchor - 8191 to anchor - 1; any other block's slot holds another
        // block's hash (one 8,191 apart), which the comparison below would refuse, but with a less clear error.
        if (blockNumber >= anchorNumber || anchorNumber - blockNumber > _HISTORY_SERVE_WINDOW) {
            revert StorageProofVerifier_HistoryOutOfRange(blockNumber, anchorNumber);
        }
        (bytes32 storageRoot, bytes32 codeHash) = _proveAccount(_HISTORY_CONTRACT, anchorRoot, history.accountProof);
        if (codeHash != _HISTORY_CODE_HASH) revert StorageProofVerifier_HistoryContractMismatch(codeHash);
        bytes32 recorded = _recordedHash(storageRoot, blockNumber, history.slotProof);
        if (recorded != headerHash) revert StorageProofVerifier_HistoryHashMismatch(blockNumber, recorded, headerHash);
    }

    /// @dev The hash the history contract (whose storage root is `storageRoot`) holds for `blockNumber`, proven by
    /// `slotProof`; 0 when its slot is proven empty.
    function _recordedHash(bytes32 storageRoot, uint256 blockNumber, bytes[] calldata slotProof)
        private
        pure
        returns (bytes32 recorded)
    {
        bytes32 slot = bytes32(blockNumber % _HISTORY_SERVE_WINDOW);
        (CalldataMpt.Outcome outcome, uint256 node, uint256 valueOffset, uint256 valueLength) =
            CalldataMpt.walk(storageRoot, keccak256(abi.encode(slot)), slotProof);
        if (outcome == CalldataMpt.Outcome.Found) return _slotWord(_HISTORY_CONTRACT, slot, node, valueOffset, valueLength);
        if (outcome != CalldataMpt.Outcome.Absent) {
            revert StorageProofVerifier_SlotProofInvalid(_HISTORY_CONTRACT, slot, _fault(outcome), node);
        }
    }

    /// @dev The storage root and code hash of `account`, proven under `stateRoot`.
    function _proveAccount(address account, bytes32 stateRoot, bytes[] calldata accountProof)
        private
        pure
        returns (bytes32 storageRoot, bytes32 codeHash)
    {
        (CalldataMpt.Outcome outcome, uint256 node, uint256 valueOffset, uint256 valueLength) =
            CalldataMpt.walk(stateRoot, keccak256(abi.encodePacked(account)), accountProof);
        if (outcome == CalldataMpt.Outcome.Absent) revert StorageProofVerifier_AccountAbsent(account);
        if (outcome != CalldataMpt.Outcome.Found) revert StorageProofVerifier_AccountProofInvalid(account, _fault(outcome), node);
        // The leaf's value is the RLP list [nonce, balance, storageRoot, codeHash].
        uint256 end = valueOffset + valueLength;
        (uint256 field, uint256 fieldLength, bool isList, bool malformed) = _item(valueOffset, end);
        malformed = malformed || !isList || field + fieldLength != end;
        uint256 next = field;
        for (uint256 i = 0; i < 4 && !malformed; ++i) {
            (field, fieldLength, isList, malformed) = _item(next, end);
            next = field + fieldLength;
            // Fields 2 and 3 are the 32-byte storage root and code hash.
            if (i >= 2 && !malformed) {
                malformed = isList || fieldLength != 32;
                if (i == 2) storageRoot = _word(field);
                else codeHash = _word(field);
            }
        }
        if (malformed || next != end) {
            revert StorageProofVerifier_AccountProofInvalid(account, TrieFault.MalformedNode, node);
        }
    }

    /// @dev The value of `slot` of `account`, proven present or absent under `storageRoot` as `slotProof` claims.
    function _proveSlot(address account, bytes32 storageRoot, bytes32 slot, SlotProof calldata slotProof)
        private
        pure
        returns (bytes32 value)
    {
        // The key is derived here from the slot, never read from the proof: a proof of any other slot proves a
        // different key and fails.
        (CalldataMpt.Outcome outcome, uint256 node, uint256 valueOffset, uint256 valueLength) =
            CalldataMpt.walk(storageRoot, keccak256(abi.encode(slot)), slotProof.nodes);
        bool present = outcome == CalldataMpt.Outcome.Found;
        if (!present && outcome != CalldataMpt.Outcome.Absent) {
            revert StorageProofVerifier_SlotProofInvalid(account, slot, _fault(outcome), node);
        }
        if (present != slotProof.included) {
            revert StorageProofVerifier_InclusionClaimMismatch(account, slot, slotProof.included);
        }
        if (present) value = _slotWord(account, slot, node, valueOffset, valueLength);
    }

    /// @dev A slot's value as the trie holds it: the RLP string of its big-endian bytes, leading zeros stripped.
    function _slotWord(address account, bytes32 slot, uint256 node, uint256 valueOffset, uint256 valueLength)
        private
        pure
        returns (bytes32 word)
    {
        (uint256 payload, uint256 length, bool isList, bool outside) = _item(valueOffset, valueOffset + valueLength);
        if (outside || isList || length == 0 || length > 32 || payload + length != valueOffset + valueLength) {
            revert StorageProofVerifier_SlotProofInvalid(account, slot, TrieFault.MalformedNode, node);
        }
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            word := shr(sub(256, shl(3, length)), calldataload(payload))
        }
    }

    /// @dev A header's state root, number and timestamp, read in place.
    function _readHeader(bytes calldata header)
        private
        pure
        returns (bytes32 stateRoot, uint256 blockNumber, uint256 blockTimestamp)
    {
        uint256 start;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            start := header.offset
        }
        uint256 end = start + header.length;
        if (header.length == 0) revert StorageProofVerifier_MalformedHeader();
        (uint256 field, uint256 length, bool isList, bool outside) = _item(start, end);
        if (outside || !isList || field + length != end) revert StorageProofVerifier_MalformedHeader();
        for (uint256 i = 0; i <= _HEADER_TIMESTAMP; ++i) {
            (uint256 payload, uint256 payloadLength, bool fieldIsList, bool fieldOutside) = _item(field, end);
            if (fieldOutside || fieldIsList) revert StorageProofVerifier_MalformedHeader();
            if (i == _HEADER_STATE_ROOT) {
                if (payloadLength != 32) revert StorageProofVerifier_MalformedHeader();
                stateRoot = _word(payload);
            } else if (i == _HEADER_NUMBER) {
                blockNumber = _headerUint(payload, payloadLength);
            } else if (i == _HEADER_TIMESTAMP) {
                blockTimestamp = _headerUint(payload, payloadLength);
            }
            field = payload + payloadLength;
        }
    }

    /// @dev A header's integer field: at most 8 big-endian bytes.
    function _headerUint(uint256 payload, uint256 length) private pure returns (uint256 value) {
        if (length > 8) revert StorageProofVerifier_MalformedHeader();
        if (length == 0) return 0;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            value := shr(sub(256, shl(3, length)), calldataload(payload))
        }
    }

    /// @dev The RLP item at calldata offset `start`: its payload's offset and length, whether it is a list, and
    /// whether it does not lie within `end` (which the caller names as its own error). The same decoding as the Yul
    /// `item` of `CalldataMpt.walk`, which must live inside the walk's one assembly block (Yul functions cannot be
    /// shared between blocks, and a Solidity call per item would cost gas on every node): here it reads the few
    /// header and account fields, where a call is cheap.
    function _item(uint256 start, uint256 end)
        private
        pure
        returns (uint256 payload, uint256 length, bool isList, bool outside)
    {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let word := calldataload(start)
            let prefix := byte(0, word)
            let lengthOfLength := 0
            switch lt(prefix, 0x80)
            case 1 {
                payload := start
                length := 1
            }
            default {
                switch lt(prefix, 0xb8)
                case 1 {
                    payload := add(start, 1)
                    length := sub(prefix, 0x80)
                }
                default {
                    switch lt(prefix, 0xc0)
                    case 1 { lengthOfLength := sub(prefix, 0xb7) }
                    default {
                        isList := 1
                        switch lt(prefix, 0xf8)
                        case 1 {
                            payload := add(start, 1)
                            length := sub(prefix, 0xc0)
                        }
                        default { lengthOfLength := sub(prefix, 0xf7) }
                    }
                }
            }
            if lengthOfLength {
                outside := gt(lengthOfLength, 3)
                length := shr(sub(256, shl(3, lengthOfLength)), shl(8, word))
                payload := add(add(start, 1), lengthOfLength)
            }
            outside := or(outside, or(iszero(lt(start, end)), gt(add(payload, length), end)))
        }
    }

    /// @dev The 32-byte word at calldata offset `at`.
    function _word(uint256 at) private pure returns (bytes32 word) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            word := calldataload(at)
        }
    }

    /// @dev keccak256 of calldata bytes, hashed in scratch memory past the free pointer (which stays put).
    function _hash(bytes calldata data) private pure returns (bytes32 hash) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let scratch := mload(0x40)
            calldatacopy(scratch, data.offset, data.length)
            hash := keccak256(scratch, data.length)
        }
    }

    /// @dev How old the L1 header is by the L2's clock, 0 when the L1's clock is ahead (a chain's clocks may disagree by a
    /// few seconds). Branch-free, so that it costs the same gas either way: a wallet's estimate runs at one time and the
    /// transaction at another, and an estimate is exact, so that a few gas more before the caller's last call (the
    /// settlement's payout) would leave that call short (seen on the devnet, where the two clocks often tie).
    function _age(uint256 blockTimestamp) private view returns (uint256 age) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            age := mul(sub(timestamp(), blockTimestamp), gt(timestamp(), blockTimestamp))
        }
    }

    /// @dev The hash the L2 knows for L1 block `number`: the recorded one, else the current block's from the
    /// predeploy (no record needed for a fresh proof). Reverts when it knows none. The record is read first so that
    /// a proof at a recorded block costs the same gas whether or not that block is still the current one: a wallet
    /// estimates while it is, and the transaction runs in a later L2 block, after `L1Block` has moved on (asked the
    /// other way round, the estimate took the cheaper path and the transaction ran out of gas).
    function _knownHash(uint256 number) private view returns (bytes32 hash) {
        // `number` came from at most 8 bytes, so it fits a uint64.
        (hash,) = L1_BLOCK_HASHES.hashOf(uint64(number));
        if (hash != bytes32(0)) return hash;
        if (number == L1_BLOCK.number()) return L1_BLOCK.hash();
        revert StorageProofVerifier_UnknownBlock(number);
    }

    /// @dev The storage slot of `owner`'s entry in a `mapping(address => uint256)` at slot `mappingSlot`.
    function _balanceSlot(address owner, uint256 mappingSlot) private pure returns (bytes32) {
        return keccak256(abi.encode(owner, mappingSlot));
    }

    /// @dev A walk's outcome other than Found or Absent, as the interface's fault.
    function _fault(CalldataMpt.Outcome outcome) private pure returns (TrieFault) {
        // Outcome lists Found and Absent, then the faults in TrieFault's order after None.
        return TrieFault(uint8(outcome) - 1);
    }

    /// @dev `proof`, an `abi.encode(StorageProof)`, as a calldata struct, once every offset and length in it is
    /// checked to lie within `proof` (the compiler's own checks only bound them by the whole calldata).
    function _inCalldata(bytes calldata proof) private pure returns (StorageProof calldata decoded) {
        uint256 base;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            base := proof.offset
        }
        uint256 end = base + proof.length;
        // The struct's head: four offsets (header, accountProof, slotProofs, history) from its start.
        uint256 head = _reference(base, base, end, 4);
        _checkBytes(_reference(head, head, end, 0), end);
        _checkBytesArray(_reference(head, head + 32, end, 0), end);
        uint256 slotProofs = _reference(head, head + 64, end, 0);
        uint256 count = _arrayLength(slotProofs, end);
        for (uint256 i = 0; i < count; ++i) {
            // Each SlotProof's head: the `included` word, then the offset of its nodes.
            uint256 slotProof = _reference(slotProofs + 32, slotProofs + 32 + 32 * i, end, 2);
            if (_readWord(slotProof, end) > 1) revert StorageProofVerifier_MalformedProof();
            _checkBytesArray(_reference(slotProof, slotProof + 32, end, 0), end);
        }
        uint256 history = _reference(head, head + 96, end, 3);
        _checkBytes(_reference(history, history, end, 0), end);
        _checkBytesArray(_reference(history, history + 32, end, 0), end);
        _checkBytesArray(_reference(history, history + 64, end, 0), end);
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            decoded := head
        }
    }

    /// @dev The position an ABI offset word at `at` points to, counted from `from`, with room for `words` words.
    function _reference(uint256 from, uint256 at, uint256 end, uint256 words) private pure returns (uint256 target) {
        uint256 offset = _readWord(at, end);
        if (offset > _MAX_WORD) revert StorageProofVerifier_MalformedProof();
        target = from + offset;
        if (target + 32 * words > end) revert StorageProofVerifier_MalformedProof();
    }

    /// @dev Checks that the `bytes` at `at` lies within `end`.
    function _checkBytes(uint256 at, uint256 end) private pure {
        uint256 length = _readWord(at, end);
        if (length > _MAX_WORD || at + 32 + length > end) revert StorageProofVerifier_MalformedProof();
    }

    /// @dev Checks that the `bytes[]` at `at`, and each of its elements, lie within `end`.
    function _checkBytesArray(uint256 at, uint256 end) private pure {
        uint256 count = _arrayLength(at, end);
        for (uint256 i = 0; i < count; ++i) {
            _checkBytes(_reference(at + 32, at + 32 + 32 * i, end, 1), end);
        }
    }

    /// @dev The length word of the array at `at`, whose offsets or words must lie within `end`.
    function _arrayLength(uint256 at, uint256 end) private pure returns (uint256 count) {
        count = _readWord(at, end);
        if (count > _MAX_WORD || at + 32 + 32 * count > end) revert StorageProofVerifier_MalformedProof();
    }

    /// @dev The word at `at`, which must lie within `end`.
    function _readWord(uint256 at, uint256 end) private pure returns (uint256 word) {
        if (at + 32 > end) revert StorageProofVerifier_MalformedProof();
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            word := calldataload(at)
        }
    }
}
