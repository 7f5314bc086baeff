// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";

import { VotePacking } from "../../../contracts/libraries/VotePacking.sol";

import { bound } from "../utils/Bound.sol";
import { Test } from "../utils/Test.sol";

/// @notice Exposes the library's internal functions as external calls, so a test can expect a revert from
/// one call, and holds an overflow mapping of its own for the vote words.
/// The book and account parameters stay in memory although the linter suggests calldata: the library's
/// functions take and update memory, as the registry's do.
contract VotePackingHarness {
    using VotePacking for VotePacking.VoteBook;
    using VotePacking for VotePacking.LicenseAccount;

    mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) internal _overflow;

    function setWord(uint256 jobId, uint256 index, uint256 value) external {
        _overflow[jobId][index] = value;
    }

    function word(uint256 jobId, uint256 index) external view returns (uint256) {
        return _overflow[jobId][index];
    }

    // solhint-disable-next-line gas-calldata-parameters
    function storeVotes(
        uint256 jobId,
        VotePacking.VoteBook memory book,
        uint256 body,
        uint256 firstNew
    ) external returns (uint256) {
        return VotePacking.storeVotes(_overflow, jobId, book, body, firstNew);
    }

    function loadVotes(uint256 jobId, uint256 body, uint256 extra) external view returns (VotePacking.VoteBook memory) {
        return VotePacking.loadVotes(_overflow, jobId, body, extra);
    }

    // solhint-disable-next-line gas-calldata-parameters
    function appendVote(
        VotePacking.VoteBook memory book,
        uint256 licenseId,
        uint256 candidate
    ) external pure returns (VotePacking.VoteBook memory) {
        book.appendVote(licenseId, candidate);
        return book;
    }

    // solhint-disable-next-line gas-calldata-parameters
    function startEpoch(
        VotePacking.LicenseAccount memory account,
        uint256 epoch
    ) external pure returns (VotePacking.LicenseAccount memory) {
        account.startEpoch(epoch);
        return account;
    }

    // solhint-disable-next-line gas-calldata-parameters
    function creditAgreeingVote(
        VotePacking.LicenseAccount memory account,
        uint256 feeShare
    ) external pure returns (VotePacking.LicenseAccount memory) {
        account.creditAgreeingVote(feeShare);
        return account;
    }
}

/// @notice Fuzz tests of the registry's packed words on their own: every field reads back what was written,
/// writing one field never changes another (nor another job's words), and the bounds the registry relies on
/// revert instead of wrapping into a neighbouring field.
contract VotePackingTest is Test {
    using VotePacking for VotePacking.VoteBook;

    /// @dev The registry's `MAX_VOTES_PER_JOB`: it refuses a submission past it before packing anything.
    uint256 internal constant MAX_VOTES = 16;
    uint256 internal constant MAX_LICENSE_ID = (1 << 48) - 1;

    VotePackingHarness internal harness;

    function setUp() public {
        harness = new VotePackingHarness();
    }

    /*//////////////////////////////////////////////////////////////
                                HELPERS
    //////////////////////////////////////////////////////////////*/

    /// @dev A book of `count` votes drawn from `seed`: license ids over the whole 48 bits (the top one
    /// included, where a wrong mask would show), answer indexes below `candidates`.
    function _book(
        uint256 seed,
        uint256 count,
        uint256 candidates,
        uint256 room
    ) internal pure returns (VotePacking.VoteBook memory book) {
        book.votes = new uint256[](count + room);
        book.candidateCount = candidates;
        for (uint256 i = 0; i < count; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            uint256 licenseId = r % 4 == 0 ? MAX_LICENSE_ID - (r >> 8) % 3 : (r >> 8) & MAX_LICENSE_ID;
            book.appendVote(licenseId, (r >> 128) % candidates);
        }
    }

    function _assertSameVotes(
        VotePacking.VoteBook memory actual,
        VotePacking.VoteBook memory expected,
        string memory message
    ) internal pure {
        assertEq(actual.voteCount, expected.voteCount, string.concat(message, ": vote count"));
        assertEq(actual.candidateCount, expected.candidateCount, string.concat(message, ": answer count"));
        for (uint256 i = 0; i < expected.voteCount; ++i) {
            assertEq(actual.votes[i], expected.votes[i], string.concat(message, ": a vote"));
            assertEq(VotePacking.licenseOf(actual.votes[i]), expected.votes[i] >> 8, string.concat(message, ": a license"));
            assertEq(VotePacking.candidateOf(actual.votes[i]), expected.votes[i] & 0xff, string.concat(message, ": an answer"));
        }
    }

    function _panic(uint256 code) internal pure returns (bytes memory) {
        return abi.encodeWithSignature("Panic(uint256)", code);
    }

    /*//////////////////////////////////////////////////////////////
                              JOB BODIES
    //////////////////////////////////////////////////////////////*/

    function testFuzz_OpenBody_RoundTrips(uint96 fee, uint32 callbackGasLimit) public view {
        uint256 body = VotePacking.openBody(fee, callbackGasLimit);
        assertEq(VotePacking.feeOf(body), fee, "fee");
        assertEq(VotePacking.callbackGasLimitOf(body), callbackGasLimit, "callback gas limit");
        assertEq(VotePacking.voteCountOf(body), 0, "a new job has votes");
        VotePacking.VoteBook memory book = harness.loadVotes(1, body, 0);
        assertEq(book.voteCount, 0, "a new job's book has votes");
        assertEq(book.candidateCount, 0, "a new job's book has answers");
    }

    function testFuzz_ResultBody_RoundTrips(uint256 balance, uint64 sourceBlock) public pure {
        balance = bound(balance, 0, VotePacking.LARGE_BALANCE);
        uint256 body = VotePacking.resultBody(balance, sourceBlock);
        assertEq(VotePacking.balanceOf(body), balance, "balance");
        assertEq(VotePacking.sourceBlockOf(body), sourceBlock, "source block");
    }

    /// @dev The widest balance the body keeps is one below the marker: the registry swaps anything from
    /// `LARGE_BALANCE` up for the marker, so the marker must read back as itself, never as a real balance.
    function test_ResultBody_MarkerIsTheTopOfTheField() public pure {
        uint256 body = VotePacking.resultBody(VotePacking.LARGE_BALANCE, type(uint64).max);
        assertEq(VotePacking.balanceOf(body), VotePacking.LARGE_BALANCE, "marker");
        assertEq(VotePacking.sourceBlockOf(body), type(uint64).max, "source block beside the marker");
        assertEq(VotePacking.LARGE_BALANCE, type(uint256).max >> 64, "the marker is not the field's top");
    }

    /*//////////////////////////////////////////////////////////////
                               VOTE BOOKS
    //////////////////////////////////////////////////////////////*/

    /// @dev Any book the registry can hold (up to 16 votes) reads back vote for vote, and storing it
    /// leaves the body's fee and callback limit, and another job's overflow words, as they were.
    function testFuzz_Votes_RoundTripWithoutTouchingOtherFields(
        uint256 seed,
        uint256 count,
        uint256 candidates,
        uint96 fee,
        uint32 callbackGasLimit,
        uint256 neighbour
    ) public {
        count = bound(count, 0, MAX_VOTES);
        candidates = bound(candidates, 1, count == 0 ? 1 : count);
        vm.assume(neighbour != 0);
        harness.setWord(8, 0, neighbour);
        harness.setWord(6, 3, neighbour);
        VotePacking.VoteBook memory book = _book(seed, count, candidates, 0);

        uint256 body = harness.storeVotes(7, book, VotePacking.openBody(fee, callbackGasLimit), 0);

        assertEq(VotePacking.feeOf(body), fee, "storing votes changed the fee");
        assertEq(VotePacking.callbackGasLimitOf(body), callbackGasLimit, "storing votes changed the callback limit");
        assertEq(VotePacking.voteCountOf(body), count, "vote count");
        _assertSameVotes(harness.loadVotes(7, body, 0), book, "round trip");
        assertEq(harness.word(8, 0), neighbour, "another job's words changed");
        assertEq(harness.word(6, 3), neighbour, "another job's words changed");
        // Votes go four to a word after the first two: no word past the last one holding a vote is written.
        uint256 words = count <= 2 ? 0 : (count - 2 + 3) / 4;
        assertEq(harness.word(7, words), 0, "a word past the last vote was written");
    }

    /// @dev Votes appended in a later transaction land after the earlier ones, and only the overflow words
    /// from the first new vote's on are written (an earlier word holds no new vote: rewriting it would only
    /// cost gas). A word before that one is tampered with here: it must come back tampered.
    function testFuzz_Votes_AppendRewritesOnlyTheNewWords(
        uint256 seed,
        uint256 earlier,
        uint256 later,
        uint96 fee
    ) public {
        earlier = bound(earlier, 1, MAX_VOTES - 1);
        later = bound(later, 1, MAX_VOTES - earlier);
        VotePacking.VoteBook memory book = _book(seed, earlier, 1, 0);
        uint256 body = harness.storeVotes(3, book, VotePacking.openBody(fee, 0), 0);

        VotePacking.VoteBook memory loaded = harness.loadVotes(3, body, later);
        for (uint256 i = 0; i < later; ++i) {
            loaded = harness.appendVote(loaded, uint256(keccak256(abi.encode(seed, "later", i))) & MAX_LICENSE_ID, 0);
        }
        uint256 firstNewWord = earlier <= 2 ? 0 : (earlier - 2) / 4;
        uint256 tamper = type(uint256).max;
        if (firstNewWord > 0) harness.setWord(3, 0, tamper);

        body = harness.storeVotes(3, loaded, body, earlier);

        assertEq(VotePacking.feeOf(body), fee, "appending changed the fee");
        VotePacking.VoteBook memory all = harness.loadVotes(3, body, 0);
        assertEq(all.voteCount, earlier + later, "vote count");
        for (uint256 i = 0; i < earlier + later; ++i) {
            if (firstNewWord > 0 && i >= 2 && i < 6) continue; // the tampered word
            assertEq(all.votes[i], loaded.votes[i], "a vote");
        }
        if (firstNewWord > 0) assertEq(harness.word(3, 0), tamper, "a word without new votes was rewritten");
    }

    /// @dev A license id wider than 48 bits reverts instead of being cut to another license's id.
    function testFuzz_AppendVote_RefusesLicenseIdsAbove48Bits(uint256 licenseId) public {
        licenseId = bound(licenseId, MAX_LICENSE_ID + 1, type(uint256).max);
        VotePacking.VoteBook memory book = _book(0, 0, 1, 1);
        vm.expectRevert(abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 48, licenseId));
        harness.appendVote(book, licenseId, 0);
    }

    function testFuzz_AppendVote_KeepsTheTopLicenseIdAndAnswer(uint256 candidate) public view {
        candidate = bound(candidate, 0, MAX_VOTES - 1);
        VotePacking.VoteBook memory book = harness.appendVote(_book(0, 0, 1, 1), MAX_LICENSE_ID, candidate);
        assertEq(book.voteCount, 1, "vote count");
        assertEq(VotePacking.licenseOf(book.votes[0]), MAX_LICENSE_ID, "license id");
        assertEq(VotePacking.candidateOf(book.votes[0]), candidate, "answer");
    }

    /// @dev `indexOf` finds a license's first vote and nothing for a license without one; `countFor` counts
    /// exactly the votes for an answer.
    function testFuzz_IndexOfAndCountFor(uint256 seed, uint256 count, uint256 candidates, uint256 probe) public pure {
        count = bound(count, 1, MAX_VOTES);
        candidates = bound(candidates, 1, count);
        VotePacking.VoteBook memory book = _book(seed, count, candidates, 0);
        uint256 at = probe % count;
        uint256 licenseId = VotePacking.licenseOf(book.votes[at]);
        uint256 first = VotePacking.NOT_FOUND;
        for (uint256 i = 0; i < count && first == VotePacking.NOT_FOUND; ++i) {
            if (VotePacking.licenseOf(book.votes[i]) == licenseId) first = i;
        }
        assertEq(book.indexOf(licenseId), first, "index of a voter");
        // 2^48 is one past the widest license id a vote can hold.
        assertEq(book.indexOf(MAX_LICENSE_ID + 1), VotePacking.NOT_FOUND, "a license without a vote was found");
        uint256 candidate = probe % candidates;
        uint256 expected;
        for (uint256 i = 0; i < count; ++i) {
            if (VotePacking.candidateOf(book.votes[i]) == candidate) ++expected;
        }
        assertEq(book.countFor(candidate), expected, "votes for an answer");
    }

    /*//////////////////////////////////////////////////////////////
                              COMMITMENTS
    //////////////////////////////////////////////////////////////*/

    function testFuzz_Commitment_HalvesStayApart(bytes32 subject, bytes32 answer, bytes32 other) public pure {
        uint256 open = VotePacking.subjectDigest(subject);
        assertEq(VotePacking.subjectHalfOf(open), open, "a new job's commitment is its subject half");
        uint256 withAnswer = VotePacking.withFirstAnswer(open, answer);
        assertEq(VotePacking.subjectHalfOf(withAnswer), VotePacking.subjectDigest(subject), "the answer changed the subject");
        assertTrue(VotePacking.isFirstAnswer(withAnswer, answer), "the first answer is not recognized");
        bool sameLowHalf = uint128(uint256(other)) == uint128(uint256(answer));
        assertTrue(VotePacking.isFirstAnswer(withAnswer, other) == sameLowHalf, "another answer matched");
    }

    /*//////////////////////////////////////////////////////////////
                          RECORDED ATTESTATIONS
    //////////////////////////////////////////////////////////////*/

    function testFuzz_Attested_RoundTrips(uint256 balance, uint64 sourceBlock, uint64 issuedAt) public pure {
        balance = bound(balance, 0, VotePacking.LARGE_ATTESTED_BALANCE);
        uint256 packed = VotePacking.packAttested(balance, sourceBlock, issuedAt);
        assertEq(VotePacking.attestedBalanceOf(packed), balance, "balance");
        assertEq(VotePacking.attestedSourceBlockOf(packed), sourceBlock, "source block");
        assertEq(VotePacking.attestedIssuedAtOf(packed), issuedAt, "issue time");
        // The registry tells a recorded subject by a non-zero word: every attestation has an issue time.
        if (issuedAt != 0) assertTrue(packed != 0, "a recorded attestation reads as none");
    }

    /*//////////////////////////////////////////////////////////////
                            LICENSE ACCOUNTS
    //////////////////////////////////////////////////////////////*/

    function testFuzz_Credit_AddsOneVoteAndTheShareOnly(VotePacking.LicenseAccount memory account, uint96 share) public view {
        account.fees = uint96(bound(account.fees, 0, type(uint96).max - share));
        account.epochVotes = uint64(bound(account.epochVotes, 0, type(uint64).max - 1));
        account.agreed = uint32(bound(account.agreed, 0, type(uint32).max - 1));
        VotePacking.LicenseAccount memory credited = harness.creditAgreeingVote(account, share);
        assertEq(credited.fees, uint256(account.fees) + share, "fees");
        assertEq(credited.epochVotes, uint256(account.epochVotes) + 1, "epoch votes");
        assertEq(credited.agreed, uint256(account.agreed) + 1, "agreed");
        assertEq(credited.epoch, account.epoch, "a credit changed the epoch");
        assertEq(credited.disagreed, account.disagreed, "a credit changed the disagreements");
    }

    function testFuzz_Credit_RevertsInsteadOfWrapping(VotePacking.LicenseAccount memory account, uint96 share, uint8 field) public {
        field = uint8(bound(field, 0, 2));
        if (field == 0) {
            share = uint96(bound(share, 1, type(uint96).max));
            account.fees = uint96(bound(account.fees, type(uint96).max - share + 1, type(uint96).max));
        } else if (field == 1) {
            account.epochVotes = type(uint64).max;
        } else {
            account.agreed = type(uint32).max;
        }
        vm.expectRevert(_panic(0x11));
        harness.creditAgreeingVote(account, share);
    }

    function testFuzz_StartEpoch_ResetsTheVotesOnly(VotePacking.LicenseAccount memory account, uint32 epoch) public view {
        VotePacking.LicenseAccount memory started = harness.startEpoch(account, epoch);
        assertEq(started.epoch, epoch, "epoch");
        assertEq(started.epochVotes, 0, "votes carried into the new epoch");
        assertEq(started.fees, account.fees, "a new epoch changed the fees");
        assertEq(started.agreed, account.agreed, "a new epoch changed the agreements");
        assertEq(started.disagreed, account.disagreed, "a new epoch changed the disagreements");
    }

    function testFuzz_StartEpoch_RefusesEpochsAbove32Bits(VotePacking.LicenseAccount memory account, uint256 epoch) public {
        epoch = bound(epoch, uint256(type(uint32).max) + 1, type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 32, epoch));
        harness.startEpoch(account, epoch);
    }
}
