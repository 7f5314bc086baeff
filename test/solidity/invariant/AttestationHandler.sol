// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AttestationVerifier } from "../../../contracts/AttestationVerifier.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { NodeLicense } from "../../../contracts/NodeLicense.sol";
import { NodeRegistry } from "../../../contracts/NodeRegistry.sol";
import { VerificationRegistry } from "../../../contracts/VerificationRegistry.sol";

import { Vm, VM_ADDRESS } from "../utils/Vm.sol";

/// @notice Drives attestation recordings by random sets of signers (honest ones, signers naming licenses
/// that are not theirs, signers whose licenses were transferred or re-delegated), with fee claims and time
/// warps. It keeps its own ledger of what each license was paid and flags any payment the model does not
/// expect: a recording must pay exactly the licenses that signed it, and a refused one nobody.
contract AttestationHandler {
    Vm internal constant vm = Vm(VM_ADDRESS);
    uint256 internal constant LICENSES = 5;
    uint256 internal constant NONE = type(uint256).max;

    NodeLicense public immutable license;
    NodeRegistry public immutable nodeRegistry;
    VerificationRegistry public immutable registry;
    AttestationVerifier public immutable verifier;
    address public immutable consumer;

    uint256[4] public keys = [uint256(0xA11CE), 0xB0B, 0xCA401, 0xD0D];
    address[2] public owners = [address(0x0A0), address(0x0A1)];

    uint256 public currentTime;
    uint64 public lastIssuedAt;

    mapping(uint256 licenseId => uint256 operatorIndex) public delegatedTo;
    mapping(uint256 licenseId => uint256 amount) public paidInModel;
    mapping(uint256 licenseId => uint256 amount) public claimedInModel;
    uint256 public recordings;
    bool public unexpectedOutcome;

    mapping(bytes32 action => uint256 count) public calls;

    constructor(AttestationVerifier verifier_, address consumer_) {
        verifier = verifier_;
        registry = VerificationRegistry(address(verifier_.REGISTRY()));
        nodeRegistry = NodeRegistry(address(verifier_.NODE_REGISTRY()));
        license = NodeLicense(address(nodeRegistry.LICENSE()));
        consumer = consumer_;
        currentTime = block.timestamp;
    }

    /// @dev Licenses 1-3 to operators 0-2, licenses 4 and 5 to operator 3 (airdropped to owners[0] first).
    function delegateAll() external {
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            _delegate(licenseId, licenseId <= 3 ? licenseId - 1 : 3);
        }
        _beatAll();
    }

    /*//////////////////////////////////////////////////////////////
                                ACTIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev The operators in `signerMask` sign for the licenses the model says they run; with `lie`, the
    /// first of them also names a license it does not run: signed so (an odd `balance`), or appended by
    /// whoever carries the signatures after signing (an even one: the padding attack).
    function record(uint256 signerMask, bool lie, uint256 balance) external {
        currentTime += 1;
        vm.warp(currentTime);
        _beatAll();
        IAttestationVerifier.BalanceAttestation memory attestation = IAttestationVerifier.BalanceAttestation({
            chain: 0,
            owner: bytes32(uint256(0xABC)),
            asset: bytes32(uint256(0xDEF)),
            balance: balance,
            queryResultHash: keccak256(abi.encode(balance)),
            sourceBlock: 1,
            issuedAt: uint64(currentTime)
        });
        (IAttestationVerifier.NodeSignature[] memory signatures, uint256 signed, bool lied) = _signatures(attestation, signerMask % 16, lie, balance % 2 == 0);
        bool expected = !lied && signed >= nodeRegistry.quorum() && signatures.length > 0;

        uint256 fee = registry.requestFee();
        vm.prank(consumer);
        try verifier.recordAttestation(attestation, signatures) {
            if (!expected) unexpectedOutcome = true;
            calls["record"]++;
            ++recordings;
            lastIssuedAt = attestation.issuedAt;
            uint256 share = fee / signed;
            uint256 remainder = fee - share * signed;
            for (uint256 i = 0; i < signatures.length; ++i) {
                for (uint256 j = 0; j < signatures[i].licenseIds.length; ++j) {
                    paidInModel[signatures[i].licenseIds[j]] += share + remainder;
                    remainder = 0;
                }
            }
        } catch {
            if (expected) unexpectedOutcome = true;
            calls["record.refused"]++;
        }
    }

    /// @dev A license changes hands: its delegation is void until the new owner delegates again.
    function transferLicense(uint256 licenseSeed) external {
        uint256 licenseId = 1 + licenseSeed % LICENSES;
        address from = license.ownerOf(licenseId);
        address to = from == owners[0] ? owners[1] : owners[0];
        vm.prank(from);
        license.transferFrom(from, to, licenseId);
        delegatedTo[licenseId] = NONE;
        calls["transferLicense"]++;
    }

    function redelegate(uint256 licenseSeed, uint256 operatorSeed) external {
        _delegate(1 + licenseSeed % LICENSES, operatorSeed % keys.length);
        calls["redelegate"]++;
    }

    function claimFees(uint256 licenseSeed) external {
        uint256 licenseId = 1 + licenseSeed % LICENSES;
        uint256 claimable = registry.claimableFees(licenseId);
        if (claimable == 0) return;
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        vm.prank(license.ownerOf(licenseId));
        registry.claimFees(ids);
        claimedInModel[licenseId] += claimable;
        calls["claimFees"]++;
    }

    /*//////////////////////////////////////////////////////////////
                                HELPERS
    //////////////////////////////////////////////////////////////*/

    function _signatures(
        IAttestationVerifier.BalanceAttestation memory attestation,
        uint256 mask,
        bool lie,
        bool padAfterSigning
    ) internal view returns (IAttestationVerifier.NodeSignature[] memory signatures, uint256 signed, bool lied) {
        uint256 count;
        for (uint256 i = 0; i < keys.length; ++i) {
            if (mask & (1 << i) != 0 && _licensesOf(i).length > 0) ++count;
        }
        signatures = new IAttestationVerifier.NodeSignature[](count);
        count = 0;
        for (uint256 i = 0; i < keys.length; ++i) {
            uint256[] memory ids = _licensesOf(i);
            if (mask & (1 << i) == 0 || ids.length == 0) continue;
            bytes32 digest = verifier.hashAttestation(attestation, ids);
            if (lie && count == 0) {
                // Name one more license, run by someone else (or by no one), as if it were this signer's.
                uint256 foreign = 1 + (i + 1) % LICENSES;
                if (delegatedTo[foreign] != i) {
                    uint256[] memory more = new uint256[](ids.length + 1);
                    for (uint256 j = 0; j < ids.length; ++j) more[j] = ids[j];
                    more[ids.length] = foreign;
                    ids = more;
                    lied = true;
                    if (!padAfterSigning) digest = verifier.hashAttestation(attestation, ids);
                }
            }
            (uint8 v, bytes32 r, bytes32 s) = vm.sign(keys[i], digest);
            signatures[count++] = IAttestationVerifier.NodeSignature({ signer: vm.addr(keys[i]), licenseIds: ids, signature: abi.encodePacked(r, s, v) });
            signed += ids.length;
        }
    }

    function _licensesOf(uint256 operatorIndex) internal view returns (uint256[] memory ids) {
        uint256 count;
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            if (delegatedTo[licenseId] == operatorIndex) ++count;
        }
        ids = new uint256[](count);
        count = 0;
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            if (delegatedTo[licenseId] == operatorIndex) ids[count++] = licenseId;
        }
    }

    function _delegate(uint256 licenseId, uint256 operatorIndex) internal {
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        vm.prank(license.ownerOf(licenseId));
        nodeRegistry.delegate(ids, vm.addr(keys[operatorIndex]));
        delegatedTo[licenseId] = operatorIndex;
    }

    function _beatAll() internal {
        for (uint256 i = 0; i < keys.length; ++i) {
            vm.prank(vm.addr(keys[i]));
            nodeRegistry.heartbeat(1);
        }
    }
}
