// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";

import {
    FinalizedJobBody,
    LicenseAccount,
    OpenJobBody,
    RecordedAttestation,
    VotePacking
} from "../../../contracts/libraries/VotePacking.sol";

import { bound } from "../utils/Bound.sol";
import { Test } from "../utils/Test.sol";

/// @notice Exposes the library's internal functions as external calls, so a test can expect a revert from
/// one call, and holds an overflow mapping of its own for the vote words.
/// The book parameters stay in memory although the linter suggests calldata: the library's functions take
/// and update memory, as the registry's do.
contract VotePackingHarness {
    using VotePacking for VotePacking.VoteBook;

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
        OpenJobBody body,
        uint256 firstNew
    ) external returns (OpenJobBody) {
        return VotePacking.storeVotes(_overflow, jobId, book, body, firstNew);
    }

    function loadVotes(uint256 jobId, OpenJobBody body, uint256 extra) external view returns (VotePacking.VoteBook memory) {
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

    function creditAgreeingVote(LicenseAccount account, uint256 feeShare) external pure returns (LicenseAccount) {
        return account.creditAgreeingVote(feeShare);
    }

    function addFees(LicenseAccount account, uint96 amount) external pure returns (LicenseAccount) {
        return account.addFees(amount);
    }

    function addDisagreement(LicenseAccount account) external pure returns (LicenseAccount) {
        return account.addDisagreement();
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
        OpenJobBody body = VotePacking.openBody(fee, callbackGasLimit);
        assertEq(body.feeOf(), fee, "fee");
        assertEq(body.callbackGasLimitOf(), callbackGasLimit, "callback gas limit");
        assertEq(body.voteCountOf(), 0, "a new job has votes");
        VotePacking.VoteBook memory book = harness.loadVotes(1, body, 0);
        assertEq(book.voteCount, 0, "a new job's book has votes");
        assertEq(book.candidateCount, 0, "a new job's book has answers");
    }

    function testFuzz_ResultBody_RoundTrips(uint256 balance, uint64 sourceBlock) public pure {
        balance = bound(balance, 0, VotePacking.LARGE_BALANCE);
        FinalizedJobBody body = VotePacking.resultBody(balance, sourceBlock);
        assertEq(body.balanceOf(), balance, "balance");
        assertEq(body.sourceBlockOf(), sourceBlock, "source block");
    }

    /// @dev The widest balance the body keeps is one below the marker: the registry swaps anything from
    /// `LARGE_BALANCE` up for the marker, so the marker must read back as itself, never as a real balance.
    function test_ResultBody_MarkerIsTheTopOfTheField() public pure {
        FinalizedJobBody body = VotePacking.resultBody(VotePacking.LARGE_BALANCE, type(uint64).max);
        assertEq(body.balanceOf(), VotePacking.LARGE_BALANCE, "marker");
        assertEq(body.sourceBlockOf(), type(uint64).max, "source block beside the marker");
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

        OpenJobBody body = harness.storeVotes(7, book, VotePacking.openBody(fee, callbackGasLimit), 0);

        assertEq(body.feeOf(), fee, "storing votes changed the fee");
        assertEq(body.callbackGasLimitOf(), callbackGasLimit, "storing votes changed the callback limit");
        assertEq(body.voteCountOf(), count, "vote count");
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
        OpenJobBody body = harness.storeVotes(3, book, VotePacking.openBody(fee, 0), 0);

        VotePacking.VoteBook memory loaded = harness.loadVotes(3, body, later);
        for (uint256 i = 0; i < later; ++i) {
            loaded = harness.appendVote(loaded, uint256(keccak256(abi.encode(seed, "later", i))) & MAX_LICENSE_ID, 0);
        }
        uint256 firstNewWord = earlier <= 2 ? 0 : (earlier - 2) / 4;
        uint256 tamper = type(uint256).max;
        if (firstNewWord > 0) harness.setWord(3, 0, tamper);

        body = harness.storeVotes(3, loaded, body, earlier);

        assertEq(body.feeOf(), fee, "appending changed the fee");
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
        RecordedAttestation packed = VotePacking.packAttested(balance, sourceBlock, issuedAt);
        assertEq(packed.attestedBalanceOf(), balance, "balance");
        assertEq(packed.attestedSourceBlockOf(), sourceBlock, "source block");
        assertEq(packed.attestedIssuedAtOf(), issuedAt, "issue time");
        // The registry tells a recorded subject by a non-zero word: every attestation has an issue time.
        if (issuedAt != 0) assertTrue(packed.isRecorded(), "a recorded attestation reads as none");
    }

    function test_Attested_NothingRecordedIsZero() public pure {
        assertTrue(!RecordedAttestation.wrap(0).isRecorded(), "an empty slot reads as recorded");
    }

    /// @dev The marker reads back as itself beside the widest source block and issue time.
    function test_Attested_MarkerIsTheTopOfTheField() public pure {
        RecordedAttestation packed =
            VotePacking.packAttested(VotePacking.LARGE_ATTESTED_BALANCE, type(uint64).max, type(uint64).max);
        assertEq(packed.attestedBalanceOf(), VotePacking.LARGE_ATTESTED_BALANCE, "marker");
        assertEq(packed.attestedSourceBlockOf(), type(uint64).max, "source block beside the marker");
        assertEq(packed.attestedIssuedAtOf(), type(uint64).max, "issue time beside the marker");
        assertEq(VotePacking.LARGE_ATTESTED_BALANCE, type(uint256).max >> 128, "the marker is not the field's top");
    }

    /*//////////////////////////////////////////////////////////////
                            LICENSE ACCOUNTS
    //////////////////////////////////////////////////////////////*/

    /// @dev An account's fields as the test sets and expects them.
    struct Fields {
        uint96 fees;
        uint32 agreed;
        uint32 disagreed;
        bool open;
    }

    function _pack(Fields memory f) internal pure returns (LicenseAccount) {
        return VotePacking.packLicenseAccount(f.fees, f.agreed, f.disagreed, f.open);
    }

    function _assertFields(LicenseAccount account, Fields memory expected, string memory message) internal pure {
        assertEq(account.feesOf(), expected.fees, string.concat(message, ": fees"));
        assertEq(account.agreedOf(), expected.agreed, string.concat(message, ": agreed"));
        assertEq(account.disagreedOf(), expected.disagreed, string.concat(message, ": disagreed"));
        assertTrue(account.isOpen() == expected.open, string.concat(message, ": open"));
    }

    function testFuzz_LicenseAccount_RoundTrips(Fields memory f) public pure {
        LicenseAccount account = _pack(f);
        _assertFields(account, f, "round trip");
    }

    /// @dev The documented layout: fees from bit 0, the open marker at 191, the counts in the top 64 bits.
    function testFuzz_LicenseAccount_KeepsItsLayout(Fields memory f) public pure {
        LicenseAccount account = _pack(f);
        uint256 expected =
            uint256(f.fees) | uint256(f.agreed) << 192 | uint256(f.disagreed) << 224 | (f.open ? 1 << 191 : 0);
        assertEq(LicenseAccount.unwrap(account), expected, "layout");
    }

    /// @dev Opening sets the marker and nothing else, once: an open account stays as it is.
    function testFuzz_Opened_SetsTheMarkerOnly(Fields memory f) public pure {
        LicenseAccount account = _pack(f);
        Fields memory expected = Fields(f.fees, f.agreed, f.disagreed, true);
        _assertFields(account.opened(), expected, "opened");
        assertEq(LicenseAccount.unwrap(account.opened().opened()), LicenseAccount.unwrap(account.opened()), "twice");
        assertTrue(LicenseAccount.unwrap(account.opened()) != 0, "an open account is never zero");
    }

    /// @dev No claim closes an account: with every amount and count claimed, an open account is non-zero.
    function testFuzz_Claims_KeepTheAccountOpen(Fields memory f) public pure {
        f.open = true;
        LicenseAccount claimed = _pack(f).withoutFees();
        assertTrue(claimed.isOpen(), "open after the claims");
        assertTrue(LicenseAccount.unwrap(claimed) != 0, "non-zero after the claims");
    }

    function testFuzz_Credit_AddsOneAgreementAndTheShareOnly(Fields memory f, uint96 share) public view {
        f.fees = uint96(bound(f.fees, 0, type(uint96).max - share));
        f.agreed = uint32(bound(f.agreed, 0, type(uint32).max - 1));
        LicenseAccount credited = harness.creditAgreeingVote(_pack(f), share);
        assertEq(credited.feesOf(), uint256(f.fees) + share, "fees");
        assertEq(credited.agreedOf(), uint256(f.agreed) + 1, "agreed");
        assertEq(credited.disagreedOf(), f.disagreed, "a credit changed the disagreements");
        assertTrue(credited.isOpen(), "a credited account is open");
    }

    /// @dev A full fee credit or agreed count reverts: it never carries into the field above.
    function testFuzz_Credit_RevertsInsteadOfWrapping(Fields memory f, uint96 share, bool fees) public {
        if (fees) {
            share = uint96(bound(share, 1, type(uint96).max));
            f.fees = uint96(bound(f.fees, type(uint96).max - share + 1, type(uint96).max));
        } else {
            f.agreed = type(uint32).max;
        }
        LicenseAccount account = _pack(f);
        vm.expectRevert(_panic(0x11));
        harness.creditAgreeingVote(account, share);
    }

    /// @dev The fee field alone changes: a claim clears it (the account stays as open as it was), an
    /// attestation's share adds to it (and opens the account).
    function testFuzz_Fees_ChangeTheFeeFieldOnly(Fields memory f, uint96 amount) public view {
        Fields memory expected = Fields(0, f.agreed, f.disagreed, f.open);
        _assertFields(_pack(f).withoutFees(), expected, "claimed");
        f.fees = uint96(bound(f.fees, 0, type(uint96).max - amount));
        expected.fees = f.fees + amount;
        expected.open = true;
        _assertFields(harness.addFees(_pack(f), amount), expected, "added");
    }

    function testFuzz_AddFees_RevertsInsteadOfWrapping(Fields memory f, uint96 amount) public {
        amount = uint96(bound(amount, 1, type(uint96).max));
        f.fees = uint96(bound(f.fees, type(uint96).max - amount + 1, type(uint96).max));
        LicenseAccount account = _pack(f);
        vm.expectRevert(_panic(0x11));
        harness.addFees(account, amount);
    }

    function testFuzz_AddDisagreement_CountsOneOnly(Fields memory f) public view {
        f.disagreed = uint32(bound(f.disagreed, 0, type(uint32).max - 1));
        Fields memory expected = Fields(f.fees, f.agreed, f.disagreed + 1, f.open);
        _assertFields(harness.addDisagreement(_pack(f)), expected, "disagreement");
    }

    function testFuzz_AddDisagreement_RevertsInsteadOfWrapping(Fields memory f) public {
        f.disagreed = type(uint32).max;
        LicenseAccount account = _pack(f);
        vm.expectRevert(_panic(0x11));
        harness.addDisagreement(account);
    }
}
