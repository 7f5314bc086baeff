// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The subset of the Foundry cheatcode interface (served by Hardhat's EDR at the address below)
/// that this project's Solidity tests use. forge-std, where the full interface lives, is distributed
/// only through GitHub, which this project's machines cannot reach; the npm package named forge-std is
/// an unofficial 2022 snapshot that does not compile on its own. The signatures below are Foundry's.
interface Vm {
    struct Log {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function warp(uint256 newTimestamp) external;
    function prank(address msgSender) external;
    function startPrank(address msgSender) external;
    function stopPrank() external;
    function expectRevert(bytes calldata revertData) external;
    function assume(bool condition) external pure;
    function label(address account, string calldata newLabel) external;
    function addr(uint256 privateKey) external pure returns (address keyAddr);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
    function snapshotGasLastCall(string calldata group, string calldata name) external returns (uint256 gasUsed);
    function recordLogs() external;
    function getRecordedLogs() external returns (Log[] memory logs);
}

address constant VM_ADDRESS = address(uint160(uint256(keccak256("hevm cheat code"))));
