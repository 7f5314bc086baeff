// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

import { bound } from "./utils/Bound.sol";
import { AttestationFixture } from "./utils/Fixtures.sol";
import { Vm } from "./utils/Vm.sol";

/// @notice The registry writes `AttestationRecorded`'s data in assembly, from its calldata (a recording
/// costs 743 gas less than through the ABI encoder): whatever the result and however many licenses signed,
/// the log must be exactly what Solidity's `emit` would have written.
contract AttestationRecordedEventTest is AttestationFixture {
    address internal consumer = address(0xC0);

    function setUp() public {
        _deployWithNodes();
        _giveCollateral(consumer, 1_000e18);
    }

    function testFuzz_LogIsTheAbiEncodedEvent(
        uint8 chain,
        bytes32 owner,
        bytes32 asset,
        uint256 balance,
        bytes32 queryResultHash,
        uint64 sourceBlock,
        uint256 count,
        uint256 seed
    ) public {
        // The verifier passes up to its MAX_LICENSES (16) distinct ids; the registry takes any list it is given.
        count = bound(count, 1, 16);
        uint256[] memory licenseIds = new uint256[](count);
        for (uint256 i = 0; i < count; ++i) {
            licenseIds[i] = uint256(keccak256(abi.encode(seed, i))) >> 200;
        }
        IAttestationVerifier.BalanceAttestation memory result = IAttestationVerifier.BalanceAttestation({
            chain: chain,
            owner: owner,
            asset: asset,
            balance: balance,
            queryResultHash: queryResultHash,
            sourceBlock: sourceBlock,
            issuedAt: uint64(block.timestamp)
        });
        uint256 fee = registry.requestFee();

        vm.recordLogs();
        vm.prank(address(verifier));
        registry.recordAttestedResult(consumer, result, licenseIds);
        Vm.Log[] memory logs = vm.getRecordedLogs();

        uint256 found;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].emitter != address(registry) || logs[i].topics[0] != IVerificationRegistry.AttestationRecorded.selector) continue;
            ++found;
            assertEq(logs[i].topics.length, 2, "topics: the selector and the payer");
            assertEq(uint256(logs[i].topics[1]), uint256(uint160(consumer)), "indexed payer");
            bytes memory expected =
                abi.encode(chain, owner, asset, balance, queryResultHash, sourceBlock, result.issuedAt, fee, licenseIds);
            assertEq(uint256(keccak256(logs[i].data)), uint256(keccak256(expected)), "data: Solidity's ABI encoding of the event");
        }
        assertEq(found, 1, "one AttestationRecorded");
    }
}
