// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @dev Maps a fuzzed `x` into [min, max], keeping values already in range (forge-std's `bound` contract).
function bound(uint256 x, uint256 min, uint256 max) pure returns (uint256) {
    require(min <= max, "bound: min > max");
    if (x >= min && x <= max) return x;
    uint256 size = max - min + 1;
    if (size == 0) return x; // the whole uint256 range
    return min + (x % size);
}
