// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import { AttestationVerifier } from "../../../contracts/AttestationVerifier.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { INodeLicense } from "@avn/contracts/interfaces/INodeLicense.sol";
import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { NodeLicense } from "../../../contracts/NodeLicense.sol";
import { NodeRegistry } from "../../../contracts/NodeRegistry.sol";
import { PrimaryToken } from "../../../contracts/PrimaryToken.sol";
import { RewardPools } from "../../../contracts/RewardPools.sol";
import { StakedToken } from "../../../contracts/StakedToken.sol";
import { VerificationRegistry } from "../../../contracts/VerificationRegistry.sol";

import { Test } from "./Test.sol";

// Solidity tests cannot run the Ignition modules, so these fixtures deploy the contracts themselves. They
// mirror module Protocol (deploy/modules/): the same contracts, the same wiring calls, and the modules'
// default values where a test has no reason to choose (deploy/modules/parts/defaults.ts).
// test/ts/repository/FixturesParity.ts compares both with the modules, so a change there that is not made here fails.
// What the tests choose themselves: names, the admin transfer delay (0, to hand roles over at once), the
// license sale, and the liveness window, request fee and quorum (`_deployProtocol`'s arguments).

/// @notice Deploys the tokens as the Solidity tests use them: the test contract holds the whole primary
/// supply and is the staked token's admin; the schedule is the modules' default (15 days → 25%,
/// 180 days → 95%).
abstract contract TokenFixture is Test {
    uint64 internal constant DEFAULT_MIN_UNLOCK_PERIOD = 15 days;
    uint64 internal constant DEFAULT_MAX_UNLOCK_PERIOD = 180 days;
    uint64 internal constant DEFAULT_MIN_REDEMPTION_RATE = 0.25e18;
    uint64 internal constant DEFAULT_MAX_REDEMPTION_RATE = 0.95e18;

    PrimaryToken internal primary;
    StakedToken internal staked;

    function _defaultSchedule() internal pure returns (IStakedToken.RateSchedule memory) {
        return IStakedToken.RateSchedule({
            minPeriod: DEFAULT_MIN_UNLOCK_PERIOD,
            maxPeriod: DEFAULT_MAX_UNLOCK_PERIOD,
            minRate: DEFAULT_MIN_REDEMPTION_RATE,
            maxRate: DEFAULT_MAX_REDEMPTION_RATE
        });
    }

    function _deployTokens(address forfeitRecipient) internal {
        primary = new PrimaryToken("Primary", "PRI", address(this));
        staked = new StakedToken("Staked", "sPRI", primary, address(this), 0, _defaultSchedule(), forfeitRecipient);
    }
}

/// @notice Deploys the protocol's contracts wired as the Protocol Ignition module wires them; the test contract
/// is every admin and, as the module's `admin`, the reward pools' funder. Licenses cost 1 primary token each, up
/// to 1,000; epochs last 7 days, jobs 1 hour, settlements open a day after an epoch and roots may be disputed
/// for 3 days (the modules' defaults).
abstract contract ProtocolFixture is TokenFixture {
    uint256 internal constant DEFAULT_EPOCH_DURATION = 7 days;
    uint256 internal constant DEFAULT_JOB_TIMEOUT = 1 hours;
    uint256 internal constant DEFAULT_SETTLEMENT_DELAY = 1 days;
    uint256 internal constant DEFAULT_DISPUTE_PERIOD = 3 days;

    NodeLicense internal license;
    NodeRegistry internal nodeRegistry;
    VerificationRegistry internal registry;
    RewardPools internal rewardPools;
    AttestationVerifier internal verifier;

    function _deployProtocol(uint256 livenessWindow, uint256 requestFee, uint256 quorum) internal {
        _deployTokens(address(0xFEE));
        INodeLicense.PriceTier[] memory tiers = new INodeLicense.PriceTier[](1);
        tiers[0] = INodeLicense.PriceTier({ upToSupply: 1000, price: 1e18 });
        license = new NodeLicense("License", "LIC", primary, address(0x7EA), 1000, tiers, address(this), 0);
        nodeRegistry = new NodeRegistry(license, livenessWindow, quorum, address(this), 0);
        license.setNodeRegistry(nodeRegistry);
        registry = new VerificationRegistry(
            staked, nodeRegistry, DEFAULT_EPOCH_DURATION, requestFee, DEFAULT_JOB_TIMEOUT, address(this), 0
        );
        staked.grantRole(staked.PROTOCOL_ROLE(), address(registry));
        nodeRegistry.grantRole(nodeRegistry.RECORDER_ROLE(), address(registry));
        rewardPools = new RewardPools(registry, DEFAULT_SETTLEMENT_DELAY, DEFAULT_DISPUTE_PERIOD, address(this), 0);
        rewardPools.grantRole(rewardPools.REWARDS_FUNDER_ROLE(), address(this));
        verifier = new AttestationVerifier(registry);
        registry.grantRole(registry.ATTESTATION_ROLE(), address(verifier));
    }

    /// @dev Gives `consumer` `amount` primary tokens of the test's and stakes them as its verification collateral.
    function _giveCollateral(address consumer, uint256 amount) internal {
        primary.transfer(consumer, amount);
        vm.startPrank(consumer);
        primary.approve(address(registry), type(uint256).max);
        registry.stakeCollateral(consumer, amount);
        vm.stopPrank();
    }

    /// @dev One node's signature over `attestation` with the operator key `privateKey`, for `licenseIds`.
    function _signAttestation(
        IAttestationVerifier.BalanceAttestation memory attestation,
        uint256 privateKey,
        uint256[] memory licenseIds
    ) internal view returns (IAttestationVerifier.NodeSignature memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(privateKey, verifier.hashAttestation(attestation, licenseIds));
        return IAttestationVerifier.NodeSignature({
            signer: vm.addr(privateKey),
            licenseIds: licenseIds,
            signature: abi.encodePacked(r, s, v)
        });
    }

    /// @dev One node's signature over the condition `attestation` with the operator key `privateKey`, for `licenseIds`.
    function _signCondition(
        IAttestationVerifier.ConditionAttestation memory attestation,
        uint256 privateKey,
        uint256[] memory licenseIds
    ) internal view returns (IAttestationVerifier.NodeSignature memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(privateKey, verifier.hashConditionAttestation(attestation, licenseIds));
        return IAttestationVerifier.NodeSignature({
            signer: vm.addr(privateKey),
            licenseIds: licenseIds,
            signature: abi.encodePacked(r, s, v)
        });
    }
}

/// @notice The protocol at quorum 2 with three circuit nodes whose operator keys the tests hold: licenses
/// 1-3, owned by `nodeOwner`, delegated to the operators of `operatorKeys`, which heart-beat. Block time
/// starts at a realistic timestamp, so that attestations can be aged.
abstract contract AttestationFixture is ProtocolFixture {
    uint256[3] internal operatorKeys = [uint256(0xA11CE), 0xB0B, 0xCA401];
    address internal nodeOwner = address(0x0A11);

    function _deployWithNodes() internal {
        vm.warp(1_700_000_000);
        _deployProtocol(600, 1e18, 2);
        license.airdrop(nodeOwner, 3);
        for (uint256 i = 0; i < 3; ++i) {
            uint256[] memory ids = new uint256[](1);
            ids[0] = i + 1;
            vm.prank(nodeOwner);
            nodeRegistry.delegate(ids, vm.addr(operatorKeys[i]));
        }
        _beatAll();
    }

    function _beatAll() internal {
        for (uint256 i = 0; i < 3; ++i) {
            vm.prank(vm.addr(operatorKeys[i]));
            nodeRegistry.heartbeat(1);
        }
    }

    /// @dev The signatures of the first two nodes (the quorum), each for its one license.
    function _quorumSignatures(IAttestationVerifier.BalanceAttestation memory attestation)
        internal
        view
        returns (IAttestationVerifier.NodeSignature[] memory signatures)
    {
        signatures = new IAttestationVerifier.NodeSignature[](2);
        for (uint256 i = 0; i < 2; ++i) {
            uint256[] memory ids = new uint256[](1);
            ids[0] = i + 1;
            signatures[i] = _signAttestation(attestation, operatorKeys[i], ids);
        }
    }

    /// @dev The signatures of the first two nodes (the quorum) over a condition verdict, each for its one license.
    function _quorumConditionSignatures(IAttestationVerifier.ConditionAttestation memory attestation)
        internal
        view
        returns (IAttestationVerifier.NodeSignature[] memory signatures)
    {
        signatures = new IAttestationVerifier.NodeSignature[](2);
        for (uint256 i = 0; i < 2; ++i) {
            signatures[i] = _signCondition(attestation, operatorKeys[i], _ids(i + 1));
        }
    }

    /// @dev A license list of the one id `licenseId`.
    function _ids(uint256 licenseId) internal pure returns (uint256[] memory ids) {
        ids = new uint256[](1);
        ids[0] = licenseId;
    }
}
