// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice A contract account for tests that refuses ETH until told to accept it, and makes calls for its owner.
contract EthToggleWallet {
    address public immutable OWNER;
    bool public accepting;

    error EthToggleWallet_NotOwner();
    error EthToggleWallet_Refused();

    constructor(address owner_) {
        OWNER = owner_;
    }

    receive() external payable {
        if (!accepting) revert EthToggleWallet_Refused();
    }

    function setAccepting(bool accepting_) external {
        if (msg.sender != OWNER) revert EthToggleWallet_NotOwner();
        accepting = accepting_;
    }

    function execute(address target, bytes calldata data) external returns (bytes memory result) {
        if (msg.sender != OWNER) revert EthToggleWallet_NotOwner();
        bool ok;
        // solhint-disable-next-line avoid-low-level-calls
        (ok, result) = target.call(data);
        if (!ok) {
            // solhint-disable-next-line no-inline-assembly
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }
}
