// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice A stand-in for the OP Stack's cross-domain messengers on one chain, for tests: `sendMessage`
/// records what the L1 side would send; `relay` delivers a message as the L2 side would, with
/// `xDomainMessageSender()` set to the claimed L1 sender for the call's duration. Used by tests only.
contract MockCrossDomainMessenger {
    struct Sent {
        address target;
        uint32 minGasLimit;
        address sender;
        uint256 value;
        bytes message;
    }

    Sent[] public sent;

    address internal _xDomainMessageSender;

    event SentMessage(address indexed target, address sender, bytes message, uint256 messageNonce, uint256 gasLimit);

    function sendMessage(address target, bytes calldata message, uint32 minGasLimit) external payable {
        sent.push(Sent({ target: target, minGasLimit: minGasLimit, sender: msg.sender, value: msg.value, message: message }));
        emit SentMessage(target, msg.sender, message, sent.length - 1, minGasLimit);
    }

    function sentCount() external view returns (uint256) {
        return sent.length;
    }

    /// @dev Delivers `message` to `target` as if `l1Sender` had sent it; bubbles a revert up.
    function relay(address l1Sender, address target, bytes calldata message) external payable {
        _xDomainMessageSender = l1Sender;
        // solhint-disable-next-line avoid-low-level-calls
        (bool success, bytes memory reason) = target.call{ value: msg.value }(message);
        _xDomainMessageSender = address(0);
        if (!success) {
            // solhint-disable-next-line no-inline-assembly
            assembly ("memory-safe") {
                revert(add(reason, 0x20), mload(reason))
            }
        }
    }

    function xDomainMessageSender() external view returns (address) {
        return _xDomainMessageSender;
    }
}
