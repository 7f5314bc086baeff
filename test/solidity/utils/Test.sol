// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import { Strings } from "@openzeppelin/contracts/utils/Strings.sol";

import { Vm, VM_ADDRESS } from "./Vm.sol";

/// @notice A small base for Solidity tests with forge-std's names (`vm`, `assertEq`, `targetContract`;
/// `bound` is a free function in Bound.sol), so that the tests read like Foundry tests and can move to forge-std unchanged
/// once it can be installed. An assertion fails the test by reverting with both values in the message.
abstract contract Test {
    using Strings for uint256;

    /// @dev The shape the invariant fuzzer reads from `targetSelectors()` (as in forge-std's StdInvariant).
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    Vm internal constant vm = Vm(VM_ADDRESS);

    address[] private _targetedContracts;
    FuzzSelector[] private _targetedSelectors;

    /*//////////////////////////////////////////////////////////////
                          INVARIANT TARGETING
    //////////////////////////////////////////////////////////////*/

    /// @dev Read by the invariant fuzzer: only these contracts receive random calls.
    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    /// @dev Read by the invariant fuzzer: only these functions of the targeted contracts are called.
    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }

    function targetContract(address target) internal {
        _targetedContracts.push(target);
    }

    function targetSelector(FuzzSelector memory selector) internal {
        _targetedSelectors.push(selector);
    }

    /*//////////////////////////////////////////////////////////////
                              ASSERTIONS
    //////////////////////////////////////////////////////////////*/

    function assertTrue(bool condition, string memory message) internal pure {
        if (!condition) revert(message);
    }

    function assertEq(uint256 a, uint256 b, string memory message) internal pure {
        if (a != b) _fail(message, "==", a, b);
    }

    function assertEq(address a, address b, string memory message) internal pure {
        if (a != b) revert(string.concat(message, ": addresses differ"));
    }

    function assertGt(uint256 a, uint256 b, string memory message) internal pure {
        if (a <= b) _fail(message, ">", a, b);
    }

    function assertGe(uint256 a, uint256 b, string memory message) internal pure {
        if (a < b) _fail(message, ">=", a, b);
    }

    function assertLt(uint256 a, uint256 b, string memory message) internal pure {
        if (a >= b) _fail(message, "<", a, b);
    }

    function assertLe(uint256 a, uint256 b, string memory message) internal pure {
        if (a > b) _fail(message, "<=", a, b);
    }

    function _fail(string memory message, string memory op, uint256 a, uint256 b) private pure {
        revert(string.concat(message, ": expected ", a.toString(), " ", op, " ", b.toString()));
    }
}
