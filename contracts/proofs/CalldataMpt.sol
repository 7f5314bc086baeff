// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title CalldataMpt
/// @notice Walks an Ethereum Merkle-Patricia trie proof (`eth_getProof`'s node list, root first) where it lies in
/// calldata, for a key of a secure trie (the keccak256 of an address or a storage slot, 64 nibbles), and says
/// whether the key is in the trie (with its value) or proven absent.
/// @dev Designed after Scroll's `PatriciaMerkleTrieVerifier` (scroll-tech/scroll-contracts, MIT): each node is
/// hashed where it lies and read in place, never decoded into memory, and paths are compared with the key as
/// whole words. Unlike it, this walk proves absence as well as presence, follows inline (under 32 bytes) child
/// nodes, and compares an extension's nibbles with the key. Bedrock's `SecureMerkleTrie` is the reference it is
/// differentially fuzzed against (`npm run fuzz:mpt`). Every node is reached through a hash the walk already
/// trusts (the root, then a parent's reference), so a node that passes its hash is the real one; the RLP checks
/// only keep a made-up trie from being misread.
library CalldataMpt {
    /// @notice What a walk shows: the key's value, its absence, or why the proof shows neither.
    enum Outcome {
        /// The key is in the trie; the value is returned.
        Found,
        /// The key is not in the trie: an empty branch child, another key's leaf or an extension away from it.
        Absent,
        /// The nodes end before the walk is decided.
        ProofTooShort,
        /// Nodes follow the one that decided the walk.
        ProofTooLong,
        /// A node's keccak256 is not the hash that its parent (or the root) names.
        HashMismatch,
        /// A node (or an inline node within it) is not a trie node.
        MalformedNode
    }

    /// @dev keccak256 of the RLP of an empty string: the root of a trie that holds nothing (an account with no
    /// storage). `eth_getProof` proves any key absent from it with no node, or with that one empty node.
    bytes32 internal constant EMPTY_TRIE_ROOT = 0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421;

    /// @notice The value of `key` in the trie whose root hash is `root`, or its absence, as `proof` shows.
    /// @param root The trie's root hash.
    /// @param key The path: keccak256 of the account address or of the 32-byte storage slot.
    /// @param proof The nodes from the root to the leaf or to the point where the key leaves the trie.
    /// @return outcome `Found`, `Absent`, or what is wrong with the proof.
    /// @return node The index of the node that decided the outcome (for a fault, the node at fault).
    /// @return valueOffset Where the leaf's value (an RLP string's payload) starts in calldata, when `Found`.
    /// @return valueLength Its length in bytes, when `Found`.
    // One assembly block holds the whole walk: Yul functions cannot be shared between blocks, and a walk split into
    // Solidity functions would pay their calls and checks on every node.
    // solhint-disable-next-line function-max-lines
    function walk(bytes32 root, bytes32 key, bytes[] calldata proof)
        internal
        pure
        returns (Outcome outcome, uint256 node, uint256 valueOffset, uint256 valueLength)
    {
        if (root == EMPTY_TRIE_ROOT && (proof.length == 0 || (proof.length == 1 && keccak256(proof[0]) == root))) {
            return (Outcome.Absent, 0, 0, 0);
        }
        uint256 result;
        uint256 used;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            // The RLP item at `ptr`, within `end`: its payload's offset and length, and 1 for a list, 0 for a
            // string, 2 when malformed (out of bounds, or not in its one canonical form).
            function item(ptr, end) -> payload, length, isList {
                let word := calldataload(ptr)
                let prefix := byte(0, word)
                let bad := 0
                switch lt(prefix, 0x80)
                case 1 {
                    payload := ptr
                    length := 1
                }
                default {
                    let lengthOfLength := 0
                    switch lt(prefix, 0xb8)
                    case 1 {
                        payload := add(ptr, 1)
                        length := sub(prefix, 0x80)
                        // A single byte below 0x80 is written as itself.
                        bad := and(eq(length, 1), lt(byte(1, word), 0x80))
                    }
                    default {
                        switch lt(prefix, 0xc0)
                        case 1 { lengthOfLength := sub(prefix, 0xb7) }
                        default {
                            isList := 1
                            switch lt(prefix, 0xf8)
                            case 1 {
                                payload := add(ptr, 1)
                                length := sub(prefix, 0xc0)
                            }
                            default { lengthOfLength := sub(prefix, 0xf7) }
                        }
                    }
                    if lengthOfLength {
                        // A node is far smaller than 2^24 bytes; a long form holds a length of 56 or more with
                        // no leading zero.
                        length := shr(sub(256, shl(3, lengthOfLength)), shl(8, word))
                        bad := or(or(gt(lengthOfLength, 3), iszero(byte(1, word))), lt(length, 56))
                        payload := add(add(ptr, 1), lengthOfLength)
                    }
                }
                if or(bad, or(iszero(lt(ptr, end)), gt(add(payload, length), end))) { isList := 2 }
            }

            // A leaf's or an extension's compact path at `first`, compared with the key from nibble `depth`:
            // 0 when malformed, 1 when it leads away from the key, 2 when an extension matches, 3 when a leaf
            // does; and the depth it reaches.
            function compactPath(first, firstLength, depth, path) -> verdict, reached {
                if or(iszero(firstLength), gt(firstLength, 33)) { leave }
                let pathWord := calldataload(first)
                let flag := shr(252, pathWord)
                if gt(flag, 3) { leave }
                let nibbles := 0
                let nibblesWord := 0
                switch and(flag, 1)
                case 1 {
                    nibbles := sub(shl(1, firstLength), 1)
                    nibblesWord := shl(4, pathWord)
                }
                default {
                    // An even path's first byte is the flag and a zero nibble.
                    if and(shr(248, pathWord), 0xf) { leave }
                    nibbles := shl(1, sub(firstLength, 1))
                    nibblesWord := calldataload(add(first, 1))
                }
                let isLeaf := gt(flag, 1)
                reached := add(depth, nibbles)
                // Every key has 64 nibbles: a leaf ends there, a (non-empty) extension before.
                if gt(reached, 64) { leave }
                if and(isLeaf, iszero(eq(reached, 64))) { leave }
                if and(iszero(isLeaf), iszero(nibbles)) { leave }
                verdict := add(2, isLeaf)
                if nibbles {
                    let mask := not(sub(shl(sub(256, shl(2, nibbles)), 1), 1))
                    if iszero(eq(and(nibblesWord, mask), and(shl(shl(2, depth), path), mask))) { verdict := 1 }
                }
            }

            // A child reference (the item at `at`): kind 6 with the hash's offset, 7 with an inline node's
            // bounds, 1 (absent) when empty in a branch, else 5 (malformed).
            function follow(at, payload, length, isList, inBranch) -> kind, a, b {
                kind := 5
                switch isList
                case 1 {
                    b := add(payload, length)
                    if lt(sub(b, at), 32) {
                        kind := 7
                        a := at
                    }
                }
                default {
                    if and(iszero(length), inBranch) { kind := 1 }
                    if eq(length, 32) {
                        kind := 6
                        a := payload
                    }
                }
            }

            // A leaf or an extension, [compact path, value or child reference], whose second item is at
            // `secondAt`. Returns as `visit` does.
            function shortNode(first, firstLength, secondAt, end, depth, path) -> kind, a, b, nextDepth {
                kind := 5
                let verdict := 0
                verdict, nextDepth := compactPath(first, firstLength, depth, path)
                if iszero(verdict) { leave }
                // Another key's leaf, or an extension away from the key: the key is absent.
                if eq(verdict, 1) {
                    kind := 1
                    leave
                }
                let second, secondLength, secondIsList := item(secondAt, end)
                if eq(verdict, 3) {
                    // A leaf: its value is a string.
                    if iszero(secondIsList) {
                        kind := 0
                        a := second
                        b := secondLength
                    }
                    leave
                }
                // An extension always leads to a branch: an empty reference is malformed.
                kind, a, b := follow(secondAt, second, secondLength, secondIsList, 0)
            }

            // Where item `nibble` of a branch starts (item 0 is at `body`, item 1 at `secondAt`), skipping fast
            // the two forms a branch's children take: empty, or a 32-byte hash. 0 when an item is malformed; the
            // caller reads the item found, which checks its bounds.
            function childOf(body, secondAt, end, nibble) -> childAt {
                childAt := body
                if nibble {
                    childAt := secondAt
                    for { let skipped := 1 } lt(skipped, nibble) { skipped := add(skipped, 1) } {
                        switch byte(0, calldataload(childAt))
                        case 0x80 { childAt := add(childAt, 1) }
                        case 0xa0 { childAt := add(childAt, 33) }
                        default {
                            let skip, skipLength, skipIsList := item(childAt, end)
                            if eq(skipIsList, 2) {
                                childAt := 0
                                leave
                            }
                            childAt := add(skip, skipLength)
                        }
                    }
                }
            }

            // A branch: 16 children by nibble, then a value that a secure trie never holds. Returns as `visit`.
            function branch(body, secondAt, end, depth, path) -> kind, a, b, nextDepth {
                kind := 5
                if gt(depth, 63) { leave }
                let childAt := childOf(body, secondAt, end, and(shr(sub(252, shl(2, depth)), path), 0xf))
                if iszero(childAt) { leave }
                let child, childLength, childIsList := item(childAt, end)
                if eq(childIsList, 2) { leave }
                nextDepth := add(depth, 1)
                kind, a, b := follow(childAt, child, childLength, childIsList, 1)
            }

            // One node between `start` and `end`, reached at nibble `depth` of the key: kind 0 (found: a, b are
            // the value's offset and length), 1 (absent), 5 (malformed), or 6 / 7 (go on: see `follow`).
            function visit(start, end, depth, path) -> kind, a, b, nextDepth {
                kind := 5
                // A node is a list: of 2 items (a leaf or an extension) or of 17 (a branch).
                let body := 0
                {
                    let payload, length, isList := item(start, end)
                    if and(eq(isList, 1), eq(add(payload, length), end)) { body := payload }
                }
                if iszero(body) { leave }
                let first, firstLength, firstIsList := item(body, end)
                let secondAt := add(first, firstLength)
                let isShort := 0
                {
                    let second, secondLength, secondIsList := item(secondAt, end)
                    if or(eq(firstIsList, 2), eq(secondIsList, 2)) { leave }
                    isShort := eq(add(second, secondLength), end)
                }
                switch isShort
                case 1 {
                    if iszero(firstIsList) {
                        kind, a, b, nextDepth := shortNode(first, firstLength, secondAt, end, depth, path)
                    }
                }
                default { kind, a, b, nextDepth := branch(body, secondAt, end, depth, path) }
            }

            // Where proof node `index` lies in calldata: an offset (from the array's start) to a length word and
            // the bytes. `end` is 0 when the node does not lie within the calldata.
            function locate(nodesOffset, index) -> start, end {
                let relative := calldataload(add(nodesOffset, shl(5, index)))
                let lengthAt := add(nodesOffset, relative)
                let nodeLength := calldataload(lengthAt)
                start := add(lengthAt, 32)
                end := add(start, nodeLength)
                if or(or(gt(relative, 0xffffffff), gt(nodeLength, 0xffffff)), gt(end, calldatasize())) { end := 0 }
            }

            // 1 when proof node `index` exists and is a byte-for-byte copy of the inline node from `start` to `end`.
            function listedAgain(nodesOffset, index, start, end) -> copy {
                // The array's length word sits just before its offsets.
                if lt(index, calldataload(sub(nodesOffset, 32))) {
                    let listedStart, listedEnd := locate(nodesOffset, index)
                    let length := sub(end, start)
                    if and(iszero(iszero(listedEnd)), eq(sub(listedEnd, listedStart), length)) {
                        // An inline node is under 32 bytes: one word, its first `length` bytes, compares it.
                        let mask := shl(sub(256, shl(3, length)), not(0))
                        copy := eq(and(calldataload(listedStart), mask), and(calldataload(start), mask))
                    }
                }
            }

            // The walk: `status` is an Outcome, `index` the nodes read.
            function walkNodes(rootHash, path, nodesOffset) -> status, index, valueAt, valueSize {
                // The hash the next proof node must have; 0 while an inline node (start to end) is next.
                let expected := rootHash
                let depth := 0
                let start := 0
                let end := 0
                status := 5 // MalformedNode unless decided otherwise
                for {} 1 {} {
                    if iszero(expected) {
                        // Some provers (@ethereumjs/mpt; Bedrock's MerkleTrie wants it) list an inline node again
                        // as a proof node of its own; geth does not. A copy carries nothing new: it is skipped.
                        index := add(index, listedAgain(nodesOffset, index, start, end))
                    }
                    if expected {
                        // The array's length word sits just before its offsets.
                        if eq(index, calldataload(sub(nodesOffset, 32))) {
                            status := 2 // ProofTooShort
                            leave
                        }
                        start, end := locate(nodesOffset, index)
                        index := add(index, 1)
                        if iszero(end) { leave }
                        // Hashed in scratch memory past the free pointer, which stays where it is.
                        let scratch := mload(0x40)
                        calldatacopy(scratch, start, sub(end, start))
                        if iszero(eq(keccak256(scratch, sub(end, start)), expected)) {
                            status := 4 // HashMismatch
                            leave
                        }
                    }
                    let kind := 0
                    let a := 0
                    let b := 0
                    kind, a, b, depth := visit(start, end, depth, path)
                    switch kind
                    case 6 {
                        expected := calldataload(a)
                        // No node hashes to zero; zero marks an inline node here.
                        if iszero(expected) { leave }
                    }
                    case 7 {
                        expected := 0
                        start := a
                        end := b
                    }
                    default {
                        status := kind
                        valueAt := a
                        valueSize := b
                        leave
                    }
                }
            }

            result, used, valueOffset, valueLength := walkNodes(root, key, proof.offset)
        }
        outcome = Outcome(result);
        // A zero root (no trie's hash) is refused before any node is read.
        if (used == 0) return (outcome == Outcome.ProofTooShort ? outcome : Outcome.MalformedNode, 0, 0, 0);
        if (outcome == Outcome.Found || outcome == Outcome.Absent) {
            if (used != proof.length) return (Outcome.ProofTooLong, used, 0, 0);
            return (outcome, used - 1, valueOffset, valueLength);
        }
        // A walk that ran out of nodes is at fault at the first missing one; any other at the last it read.
        node = outcome == Outcome.ProofTooShort ? used : used - 1;
    }
}
