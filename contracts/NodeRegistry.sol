// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";

import { INodeLicense } from "./interfaces/INodeLicense.sol";
import { INodeRegistry } from "./interfaces/INodeRegistry.sol";

/// @title NodeRegistry
/// @notice See {INodeRegistry}.
/// @dev A delegation is one storage slot: the operator and the license's transfer count at delegation
/// time. The license contract bumps the count on every transfer, so `operatorOf` is zero as soon as the
/// license changes hands, even if it later comes back. Keeping delegation to one fresh slot per license
/// is what makes delegating cheap; for the same reason there is no per-operator index, and
/// `delegatedLicenses` pages over license ids instead.
contract NodeRegistry is AccessControlDefaultAdminRules, INodeRegistry {
    using SafeCast for uint256;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    bytes32 public constant RECORDER_ROLE = keccak256("RECORDER_ROLE");

    /// @inheritdoc INodeRegistry
    uint256 public constant MAX_LIVENESS_WINDOW = 7 days;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    INodeLicense public immutable LICENSE;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    uint256 public livenessWindow;

    mapping(uint256 licenseId => Delegation delegation) internal _delegations;

    mapping(address operator => Heartbeat heartbeat) internal _heartbeats;

    mapping(uint256 licenseId => uint256 count) internal _submissions;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param license The license collection.
    /// @param livenessWindow_ The initial liveness window, in seconds.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        INodeLicense license,
        uint256 livenessWindow_,
        address admin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(license) == address(0)) revert NodeRegistry_ZeroAddress();
        LICENSE = license;
        _setLivenessWindow(livenessWindow_);
    }

    /*//////////////////////////////////////////////////////////////
                          EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    function delegate(uint256[] calldata licenseIds, address operator) external {
        if (operator == address(0)) revert NodeRegistry_ZeroAddress();
        if (licenseIds.length == 0) revert NodeRegistry_NoLicenses();
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            (address owner, uint256 count) = LICENSE.ownerAndTransferCount(licenseId);
            if (owner != msg.sender) revert NodeRegistry_NotLicenseOwner(licenseId, msg.sender);
            _delegations[licenseId] = Delegation({ operator: operator, licenseTransferCount: count.toUint96() });
            emit Delegated(licenseId, msg.sender, operator);
        }
    }

    /// @inheritdoc INodeRegistry
    function undelegate(uint256[] calldata licenseIds) external {
        if (licenseIds.length == 0) revert NodeRegistry_NoLicenses();
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            if (LICENSE.ownerOf(licenseId) != msg.sender) revert NodeRegistry_NotLicenseOwner(licenseId, msg.sender);
            address operator = _delegations[licenseId].operator;
            if (operator == address(0)) revert NodeRegistry_NotDelegated(licenseId);
            // Also clears a record voided by a transfer: the new owner may tidy up after the old one.
            delete _delegations[licenseId];
            emit Undelegated(licenseId, msg.sender, operator);
        }
    }

    /// @inheritdoc INodeRegistry
    function heartbeat() external {
        _heartbeat(0);
    }

    /// @inheritdoc INodeRegistry
    function heartbeat(uint32 capacity) external {
        _heartbeat(capacity);
    }

    /// @inheritdoc INodeRegistry
    function recordSubmissions(
        address operator,
        uint256[] calldata licenseIds
    ) external onlyRole(RECORDER_ROLE) returns (bool allLive) {
        if (!_isLiveOperatorOf(operator, licenseIds)) return false;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            ++_submissions[licenseIds[i]];
        }
        return true;
    }

    /// @inheritdoc INodeRegistry
    function setLivenessWindow(uint256 window) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setLivenessWindow(window);
    }

    /// @inheritdoc INodeRegistry
    function delegationOf(uint256 licenseId) external view returns (Delegation memory) {
        return _delegations[licenseId];
    }

    /// @inheritdoc INodeRegistry
    function delegatedLicenses(
        address operator,
        uint256 fromId,
        uint256 maxScan
    ) external view returns (uint256[] memory licenseIds, uint256 nextFromId) {
        if (maxScan == 0) revert NodeRegistry_ZeroMaxScan();
        uint256 lastId = LICENSE.totalMinted();
        if (fromId == 0) fromId = 1;
        uint256 endId = fromId > lastId ? fromId : lastId + 1; // exclusive
        if (maxScan < endId - fromId) {
            endId = fromId + maxScan;
            nextFromId = endId;
        }
        licenseIds = new uint256[](endId - fromId);
        uint256 found;
        for (uint256 licenseId = fromId; licenseId < endId; ++licenseId) {
            if (operatorOf(licenseId) == operator) licenseIds[found++] = licenseId;
        }
        // Shrink the array to the licenses found.
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            mstore(licenseIds, found)
        }
    }

    /// @inheritdoc INodeRegistry
    function heartbeatOf(address operator) external view returns (Heartbeat memory) {
        return _heartbeats[operator];
    }

    /// @inheritdoc INodeRegistry
    function isLive(uint256 licenseId) external view returns (bool) {
        address operator = operatorOf(licenseId);
        return operator != address(0) && _beatRecently(operator);
    }

    /// @inheritdoc INodeRegistry
    function isLiveOperatorOf(address operator, uint256[] calldata licenseIds) external view returns (bool) {
        return _isLiveOperatorOf(operator, licenseIds);
    }

    /// @inheritdoc INodeRegistry
    function submissionsOf(uint256 licenseId) external view returns (uint256) {
        return _submissions[licenseId];
    }

    /*//////////////////////////////////////////////////////////////
                           PUBLIC FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    function operatorOf(uint256 licenseId) public view returns (address) {
        Delegation memory delegation = _delegations[licenseId];
        if (delegation.operator == address(0)) return address(0);
        if (LICENSE.transferCount(licenseId) != delegation.licenseTransferCount) return address(0);
        return delegation.operator;
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function _heartbeat(uint32 capacity) private {
        _heartbeats[msg.sender] = Heartbeat({ timestamp: uint64(block.timestamp), capacity: capacity });
        emit HeartbeatRecorded(msg.sender, block.timestamp, capacity);
    }

    function _isLiveOperatorOf(address operator, uint256[] calldata licenseIds) private view returns (bool) {
        if (operator == address(0) || !_beatRecently(operator)) return false;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            if (operatorOf(licenseIds[i]) != operator) return false;
        }
        return true;
    }

    /// @dev Whether `operator`'s last heartbeat is within the liveness window.
    function _beatRecently(address operator) private view returns (bool) {
        uint256 lastBeat = _heartbeats[operator].timestamp;
        return lastBeat != 0 && block.timestamp <= lastBeat + livenessWindow;
    }

    function _setLivenessWindow(uint256 window) private {
        if (window == 0 || window > MAX_LIVENESS_WINDOW) revert NodeRegistry_InvalidLivenessWindow(window);
        uint256 oldWindow = livenessWindow;
        livenessWindow = window;
        emit LivenessWindowUpdated(oldWindow, window);
    }
}
