// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { CalldataMpt } from "../proofs/CalldataMpt.sol";

/// @title CalldataMptHarness
/// @notice Exposes {CalldataMpt.walk} to the differential fuzzing (`npm run fuzz:mpt`) and the tests, which
/// compare it with Bedrock's `MerkleTrie` (`BedrockStorageProofVerifier.trieGet`).
contract CalldataMptHarness {
    /// @notice The walk of `proof` for `key` (already hashed) under `root`: its outcome, the node that decided it,
    /// and the leaf's value (the RLP string's payload, as Bedrock returns it) when found.
    function walk(bytes32 root, bytes32 key, bytes[] calldata proof)
        public
        pure
        returns (CalldataMpt.Outcome outcome, uint256 node, bytes memory value)
    {
        uint256 valueOffset;
        uint256 valueLength;
        (outcome, node, valueOffset, valueLength) = CalldataMpt.walk(root, key, proof);
        value = new bytes(valueLength);
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            calldatacopy(add(value, 32), valueOffset, valueLength)
        }
    }

    /// @notice `walk` of many cases in one call, so that the fuzzing is not bound by calls: outcomes and values.
    function walkMany(bytes32[] calldata roots, bytes32[] calldata keys, bytes[][] calldata proofs)
        external
        pure
        returns (CalldataMpt.Outcome[] memory outcomes, bytes[] memory values)
    {
        outcomes = new CalldataMpt.Outcome[](roots.length);
        values = new bytes[](roots.length);
        for (uint256 i = 0; i < roots.length; ++i) {
            (outcomes[i],, values[i]) = walk(roots[i], keys[i], proofs[i]);
        }
    }
}
