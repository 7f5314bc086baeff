// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ProtocolFixture } from "../utils/Fixtures.sol";
import { AttestationHandler } from "./AttestationHandler.sol";

/// @notice Invariants of recorded attestations under random signer sets, lying signers, license transfers,
/// re-delegations and fee claims (see AttestationHandler).
contract AttestationInvariantTest is ProtocolFixture {
    AttestationHandler internal handler;
    address internal consumer = address(0xC0);

    function setUp() public {
        vm.warp(1_700_000_000);
        // A fee that 2, 3, 4 and 5 signing licenses do not divide: the remainder path always runs.
        _deployProtocol(7 days, 3e18 + 1, 2);
        handler = new AttestationHandler(verifier, consumer);
        license.airdrop(handler.owners(0), 5);
        handler.delegateAll();

        _giveCollateral(consumer, 1_000_000e18);

        bytes4[] memory selectors = new bytes4[](4);
        selectors[0] = AttestationHandler.record.selector;
        selectors[1] = AttestationHandler.transferLicense.selector;
        selectors[2] = AttestationHandler.redelegate.selector;
        selectors[3] = AttestationHandler.claimFees.selector;
        targetContract(address(handler));
        targetSelector(FuzzSelector({ addr: address(handler), selectors: selectors }));
    }

    /// @custom:invariant Recording pays exactly the licenses that signed, their share each: never a license
    /// that did not sign, and nothing for a refused recording.
    function invariant_RecordingPaysOnlySigners() public view {
        assertTrue(!handler.unexpectedOutcome(), "a recording was accepted or refused against the model");
        uint256 paid;
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            assertEq(
                registry.claimableFees(licenseId) + handler.claimedInModel(licenseId),
                handler.paidInModel(licenseId),
                "a license was paid other than for its signatures"
            );
            paid += handler.paidInModel(licenseId);
        }
        assertEq(paid, handler.recordings() * registry.requestFee(), "fees paid differ from the recordings' fees");
    }

    /// @custom:invariant The staked token stays exactly backed, and the registry holds the consumer's
    /// collateral and the unclaimed fees in staked tokens.
    function invariant_StakedBackingHolds() public view {
        assertEq(primary.balanceOf(address(staked)), staked.totalSupply() + staked.totalPendingRedemptions(), "backing differs");
        uint256 unclaimed;
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            unclaimed += registry.claimableFees(licenseId);
        }
        assertEq(staked.balanceOf(address(registry)), registry.collateralOf(consumer).available + unclaimed, "registry staked balance differs");
    }
}
