// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { PlainERC20 } from "../../../contracts/mocks/PlainERC20.sol";

import { TokenFixture } from "../utils/Fixtures.sol";

/// @notice Gas of each user operation, recorded with `snapshotGasLastCall` into `snapshots/*.json`
/// (committed; `npm test` fails when a figure drifts). Update with `npm run snapshot:gas`.
/// Each figure is the execution gas of the one call, without the 21,000 base transaction cost. The state
/// each call needs is prepared in `setUp`, so the measured call runs in a transaction of its own (cold
/// storage, no refunds from earlier calls), as it would on chain.
contract GasSnapshotTest is TokenFixture {
    uint256 internal constant HOLDER_KEY = 0xA11CE;

    PlainERC20 internal plain;
    address internal holder;
    address internal spender = address(0xB0B);
    address internal newStaker = address(0x5AFE);

    function setUp() public {
        holder = vm.addr(HOLDER_KEY);
        _deployTokens(address(0xFEE));
        plain = new PlainERC20(holder, 1_000e18);
        primary.transfer(holder, 1_000e18);
        primary.transfer(newStaker, 1_000e18);
        vm.prank(newStaker);
        primary.approve(address(staked), type(uint256).max);

        // The holder has staked and has one pending request (id 1).
        vm.startPrank(holder);
        primary.approve(address(staked), type(uint256).max);
        staked.stake(100e18);
        staked.requestRedemption(60e18, 30 days);
        vm.stopPrank();
    }

    function test_Gas_Stake() public {
        vm.prank(newStaker);
        staked.stake(100e18);
        vm.snapshotGasLastCall("StakedToken", "stake");
    }

    function test_Gas_RequestRedemption() public {
        vm.prank(holder);
        staked.requestRedemption(20e18, 30 days);
        vm.snapshotGasLastCall("StakedToken", "requestRedemption");
    }

    function test_Gas_CancelRedemption() public {
        vm.prank(holder);
        staked.cancelRedemption(1);
        vm.snapshotGasLastCall("StakedToken", "cancelRedemption");
    }

    function test_Gas_CompleteRedemption() public {
        vm.warp(block.timestamp + 30 days);
        vm.prank(holder);
        staked.completeRedemption(1);
        vm.snapshotGasLastCall("StakedToken", "completeRedemption");
    }

    function test_Gas_PrimaryPermitThenTransferFrom() public {
        uint256 deadline = block.timestamp + 1 hours;
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"),
                holder,
                spender,
                10e18,
                primary.nonces(holder),
                deadline
            )
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", primary.DOMAIN_SEPARATOR(), structHash));
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(HOLDER_KEY, digest);

        primary.permit(holder, spender, 10e18, deadline, v, r, s);
        vm.snapshotGasLastCall("PrimaryToken", "permit");
        vm.prank(spender);
        primary.transferFrom(holder, spender, 10e18);
        vm.snapshotGasLastCall("PrimaryToken", "transferFrom");
        assertEq(primary.balanceOf(spender), 10e18, "permit then transferFrom moved the tokens");
    }

    function test_Gas_PrimaryTransfer() public {
        vm.prank(holder);
        primary.transfer(spender, 10e18);
        vm.snapshotGasLastCall("PrimaryToken", "transfer");
    }

    function test_Gas_PlainERC20Transfer() public {
        vm.prank(holder);
        plain.transfer(spender, 10e18);
        vm.snapshotGasLastCall("PlainERC20", "transfer");
    }
}
