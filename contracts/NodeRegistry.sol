// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";

import { INodeLicense } from "@avn/contracts/interfaces/INodeLicense.sol";
import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";

/// @title NodeRegistry
/// @notice See {INodeRegistry}.
/// @dev A delegation is one storage slot: the operator. The license contract tells this registry of every
/// change of hands, and the delegation is deleted there and then, so `operatorOf` reads that one slot and
/// nothing else (the hot path of every vote and every attestation check). Keeping delegation to one fresh
/// slot per license is what makes delegating cheap; for the same reason there is no per-operator index,
/// and `delegatedLicenses` pages over license ids instead.
contract NodeRegistry is AccessControlDefaultAdminRules, INodeRegistry {
    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    bytes32 public constant RECORDER_ROLE = keccak256("RECORDER_ROLE");

    /// @inheritdoc INodeRegistry
    uint256 public constant MAX_LIVENESS_WINDOW = 7 days;

    /// @inheritdoc INodeRegistry
    uint256 public constant MAX_QUORUM = 8;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    INodeLicense public immutable LICENSE;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    // The two network parameters share one slot: every liveness check of an attestation reads both.
    uint64 internal _livenessWindow;
    uint8 internal _quorum;

    mapping(uint256 licenseId => address operator) internal _operators;

    mapping(address operator => Heartbeat heartbeat) internal _heartbeats;

    mapping(uint256 licenseId => uint256 count) internal _submissions;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param license The license collection.
    /// @param livenessWindow_ The initial liveness window, in seconds.
    /// @param quorum_ The initial quorum: distinct live licenses an answer needs.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        INodeLicense license,
        uint256 livenessWindow_,
        uint256 quorum_,
        address admin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(license) == address(0)) revert NodeRegistry_ZeroAddress();
        LICENSE = license;
        _setLivenessWindow(livenessWindow_);
        _setQuorum(quorum_);
    }

    /*//////////////////////////////////////////////////////////////
                          EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc INodeRegistry
    function delegate(uint256[] calldata licenseIds, address operator) external {
        if (operator == address(0)) revert NodeRegistry_ZeroAddress();
        if (licenseIds.length == 0) revert NodeRegistry_NoLicenses();
        // A delegation is only safe while the license contract voids it on transfer, which it does for
        // the registry it names.
        if (LICENSE.nodeRegistry() != this) revert NodeRegistry_NotLicenseRegistry();
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            if (LICENSE.ownerOf(licenseId) != msg.sender) revert NodeRegistry_NotLicenseOwner(licenseId, msg.sender);
            _operators[licenseId] = operator;
            emit Delegated(licenseId, msg.sender, operator);
        }
    }

    /// @inheritdoc INodeRegistry
    function undelegate(uint256[] calldata licenseIds) external {
        if (licenseIds.length == 0) revert NodeRegistry_NoLicenses();
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            if (LICENSE.ownerOf(licenseId) != msg.sender) revert NodeRegistry_NotLicenseOwner(licenseId, msg.sender);
            address operator = _operators[licenseId];
            if (operator == address(0)) revert NodeRegistry_NotDelegated(licenseId);
            delete _operators[licenseId];
            emit Undelegated(licenseId, msg.sender, operator);
        }
    }

    /// @inheritdoc INodeRegistry
    function voidDelegation(uint256 licenseId) external {
        if (msg.sender != address(LICENSE)) revert NodeRegistry_NotLicense(msg.sender);
        address operator = _operators[licenseId];
        if (operator == address(0)) return;
        delete _operators[licenseId];
        emit DelegationVoided(licenseId, operator);
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
    function setQuorum(uint256 quorum_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setQuorum(quorum_);
    }

    /// @inheritdoc INodeRegistry
    function livenessWindow() external view returns (uint256) {
        return _livenessWindow;
    }

    /// @inheritdoc INodeRegistry
    function quorum() external view returns (uint256) {
        return _quorum;
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
    function checkDelegations(uint256[] calldata delegations) external view returns (bool allLive, uint256 currentQuorum) {
        currentQuorum = _quorum;
        uint256 window = _livenessWindow;
        address checked; // the operator last found live (a signer's licenses come one after the other)
        for (uint256 i = 0; i < delegations.length; ++i) {
            uint256 delegation = delegations[i];
            address operator = address(uint160(delegation));
            if (operator == address(0) || _operators[delegation >> 160] != operator) return (false, currentQuorum);
            if (operator != checked) {
                uint256 lastBeat = _heartbeats[operator].timestamp;
                if (lastBeat == 0 || block.timestamp > lastBeat + window) return (false, currentQuorum);
                checked = operator;
            }
        }
        allLive = true;
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
        return _operators[licenseId];
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
        return lastBeat != 0 && block.timestamp <= lastBeat + _livenessWindow;
    }

    function _setLivenessWindow(uint256 window) private {
        if (window == 0 || window > MAX_LIVENESS_WINDOW) revert NodeRegistry_InvalidLivenessWindow(window);
        uint256 oldWindow = _livenessWindow;
        _livenessWindow = uint64(window);
        emit LivenessWindowUpdated(oldWindow, window);
    }

    function _setQuorum(uint256 quorum_) private {
        if (quorum_ == 0 || quorum_ > MAX_QUORUM) revert NodeRegistry_InvalidQuorum(quorum_);
        uint256 oldQuorum = _quorum;
        _quorum = uint8(quorum_);
        emit QuorumUpdated(oldQuorum, quorum_);
    }
}
