// The governor's states, vote choices and vote counts, as the CLI names and prints them.
export { formatVotes, PROPOSAL_STATES, SUPPORT, type ProposalStateName, type VoteChoice } from "../../lib/protocol-proposal.ts";
