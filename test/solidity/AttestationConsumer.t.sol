// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AttestationConsumer } from "@avn/contracts/AttestationConsumer.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { MockAttestationConsumer } from "../../contracts/mocks/MockAttestationConsumer.sol";

import { AttestationFixture } from "./utils/Fixtures.sol";

/// @notice Fuzz tests of `AttestationConsumer`'s subject checks against the real verifier and a real quorum: an
/// attestation signed by the quorum still proves nothing about any other owner, asset or balance, whatever
/// the words, and a verdict binds both of its owners.
contract AttestationConsumerFuzzTest is AttestationFixture {
    uint256 internal constant MAX_AGE = 10 minutes;
    address internal constant ASSET = address(0xA55E7);

    MockAttestationConsumer internal consumer;

    function setUp() public {
        _deployWithNodes();
        consumer = new MockAttestationConsumer(verifier, MAX_AGE);
    }

    function _padded(address account) internal pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }

    function _holding(bytes32 owner, uint256 balance) internal view returns (IAttestationVerifier.BalanceAttestation memory) {
        return IAttestationVerifier.BalanceAttestation({
            chain: 0,
            owner: owner,
            asset: _padded(ASSET),
            balance: balance,
            queryResultHash: keccak256("query result"),
            sourceBlock: 1000,
            issuedAt: uint64(block.timestamp)
        });
    }

    function _verdict(bytes32 ownersHash) internal view returns (IAttestationVerifier.ConditionAttestation memory) {
        return IAttestationVerifier.ConditionAttestation({
            conditionHash: keccak256("condition"),
            ownersHash: ownersHash,
            verdict: true,
            ethereumBlock: 1000,
            solanaSlot: 2000,
            issuedAt: uint64(block.timestamp)
        });
    }

    /// @dev The owner word must be the address left-padded, exactly: any other word, the address with dirty
    /// high bytes included, is another owner.
    function testFuzz_EvmHolding_OwnerIsTheLeftPaddedAddressOnly(address owner, bytes32 word, uint96 dirt, uint8 kind)
        public
    {
        bytes32 expected = _padded(owner);
        if (kind % 3 == 0) word = expected;
        else if (kind % 3 == 1) word = expected | bytes32(uint256(dirt == 0 ? 1 : dirt) << 160);
        IAttestationVerifier.BalanceAttestation memory attestation = _holding(word, 1);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        assertTrue(consumer.isBalanceAttestationValid(attestation, signatures), "the quorum's signatures failed");
        if (word != expected) {
            vm.expectRevert(
                abi.encodeWithSelector(AttestationConsumer.AttestationConsumer_WrongOwner.selector, word, expected)
            );
        }
        consumer.requireEvmHolding(attestation, signatures, owner, ASSET, 1);
    }

    /// @dev The attested balance passes exactly when it is at least the minimum.
    function testFuzz_EvmHolding_BalanceAtLeastTheMinimum(uint256 balance, uint256 minBalance) public {
        address owner = address(0xB0B0);
        IAttestationVerifier.BalanceAttestation memory attestation = _holding(_padded(owner), balance);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        if (balance < minBalance) {
            vm.expectRevert(
                abi.encodeWithSelector(AttestationConsumer.AttestationConsumer_BalanceTooLow.selector, balance, minBalance)
            );
        }
        consumer.requireEvmHolding(attestation, signatures, owner, ASSET, minBalance);
    }

    /// @dev A verdict about one Ethereum owner and Solana owner is refused for any other pair: either owner
    /// changed, or the Solana owner dropped.
    function testFuzz_Verdict_BindsBothOwners(address owner, bytes32 solanaOwner, address other, bytes32 otherSolana, uint8 kind)
        public
    {
        if (kind % 3 == 0) (other, otherSolana) = (owner, solanaOwner);
        else if (kind % 3 == 1) other = owner;
        bytes32 signed = consumer.ownersHashOf(owner, solanaOwner);
        bytes32 asked = consumer.ownersHashOf(other, otherSolana);
        assertTrue((signed == asked) == (owner == other && solanaOwner == otherSolana), "owners hash collision");
        IAttestationVerifier.ConditionAttestation memory attestation = _verdict(signed);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        if (signed != asked) {
            vm.expectRevert(abi.encodeWithSelector(AttestationConsumer.AttestationConsumer_WrongOwners.selector, signed, asked));
        }
        consumer.requireVerdict(attestation, signatures, keccak256("condition"), asked);
    }
}
