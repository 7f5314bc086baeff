// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice A stand-in for the OP Stack's cross-domain messengers on one chain, for tests. As the L1 side,
/// `sendMessage` records a message and emits the events OP's L1CrossDomainMessenger emits. As the L2 side,
/// `relayMessage` delivers one as OP's L2CrossDomainMessenger does: `xDomainMessageSender()` is the L1
/// sender during the call, the message is recorded under OP's hash as successful or failed, and a failure
/// does not revert. `relay` delivers a message and bubbles its revert up, to assert a refusal's reason.
/// Used by tests only.
contract MockCrossDomainMessenger {
    struct Sent {
        address target;
        uint32 minGasLimit;
        address sender;
        uint256 value;
        bytes message;
    }

    /// @dev OP encodes the message version in the top two bytes of the nonce it emits (version 1 here).
    uint256 internal constant _VERSION_1 = 1 << 240;

    Sent[] public sent;

    mapping(bytes32 messageHash => bool relayed) public successfulMessages;

    mapping(bytes32 messageHash => bool relayed) public failedMessages;

    address internal _xDomainMessageSender;

    event SentMessage(address indexed target, address sender, bytes message, uint256 messageNonce, uint256 gasLimit);

    event SentMessageExtension1(address indexed sender, uint256 value);

    event RelayedMessage(bytes32 indexed msgHash);

    event FailedRelayedMessage(bytes32 indexed msgHash);

    /// @notice OP's refusal of a second relay of a message that succeeded ("message has already been relayed").
    error MockCrossDomainMessenger_AlreadyRelayed(bytes32 messageHash);

    function sendMessage(address target, bytes calldata message, uint32 minGasLimit) external payable {
        sent.push(Sent({ target: target, minGasLimit: minGasLimit, sender: msg.sender, value: msg.value, message: message }));
        emit SentMessage(target, msg.sender, message, (sent.length - 1) | _VERSION_1, minGasLimit);
        emit SentMessageExtension1(msg.sender, msg.value);
    }

    function sentCount() external view returns (uint256) {
        return sent.length;
    }

    /// @dev OP's relay: a message relayed once with success can never be relayed again.
    function relayMessage(
        uint256 nonce,
        address sender,
        address target,
        uint256 value,
        uint256 minGasLimit,
        bytes calldata message
    ) external payable {
        // OP's Hashing.hashCrossDomainMessageV1: the hash of the relayMessage call that carries the message.
        bytes32 messageHash = keccak256(
            abi.encodeCall(MockCrossDomainMessenger.relayMessage, (nonce, sender, target, value, minGasLimit, message))
        );
        if (successfulMessages[messageHash]) revert MockCrossDomainMessenger_AlreadyRelayed(messageHash);
        _xDomainMessageSender = sender;
        // solhint-disable-next-line avoid-low-level-calls
        (bool success,) = target.call{ value: value }(message);
        _xDomainMessageSender = address(0);
        if (success) {
            successfulMessages[messageHash] = true;
            emit RelayedMessage(messageHash);
        } else {
            failedMessages[messageHash] = true;
            emit FailedRelayedMessage(messageHash);
        }
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
