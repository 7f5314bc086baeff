import { useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router";

import { explorerPaths } from "../../components/ExplorerLink";
import type { ChainKey } from "../../explorer/abis";
import { parseSearch } from "../../explorer/search";
import { describeError } from "../../lib/errors";
import { useExplorer, type Explorer } from "./useExplorer";

interface Hit {
  to: string;
  text: string;
}

const CHAINS: ChainKey[] = ["l2", "l1"];

/** Where an entry leads: every page of either chain that has it. */
async function resolve(input: string, { clients, known, chainName }: Explorer): Promise<Hit[] | string> {
  const query = parseSearch(input, known);
  switch (query.kind) {
    case "job":
      return [{ to: explorerPaths.job(query.id), text: `Verification job #${query.id}` }];
    case "contract":
      return query.matches.map((match) => ({
        to: explorerPaths.address(match.chain, match.address),
        text: `${match.name} on ${chainName(match.chain)} (${match.address})`,
      }));
    case "address": {
      const named = known.filter((contract) => contract.address === query.address);
      // A known contract lives on one chain; any other address may be used on both.
      const chains = named.length > 0 ? named.map((contract) => contract.chain) : CHAINS;
      return chains.map((chain) => ({
        to: explorerPaths.address(chain, query.address),
        text: `Address ${query.address} on ${chainName(chain)}`,
      }));
    }
    case "block": {
      const found = await Promise.all(
        CHAINS.map(async (chain) => ((await clients[chain].getBlockNumber()) >= query.number ? chain : undefined)),
      );
      return found
        .filter((chain) => chain !== undefined)
        .map((chain) => ({ to: explorerPaths.block(chain, query.number), text: `Block ${query.number} on ${chainName(chain)}` }));
    }
    case "hash": {
      const hits = await Promise.all(
        CHAINS.map(async (chain): Promise<Hit[]> => {
          const [tx, block] = await Promise.all([
            clients[chain].getTransaction({ hash: query.hash }).catch(() => undefined),
            clients[chain].getBlock({ blockHash: query.hash }).catch(() => undefined),
          ]);
          const found: Hit[] = [];
          if (tx !== undefined) found.push({ to: explorerPaths.tx(chain, query.hash), text: `Transaction on ${chainName(chain)}` });
          if (block?.number != null)
            found.push({ to: explorerPaths.block(chain, block.number), text: `Block ${block.number} on ${chainName(chain)}` });
          return found;
        }),
      );
      return hits.flat();
    }
    case "unknown":
      return `"${query.text}" is not a block number, a transaction hash, an address, job:<id> or a known contract's name.`;
  }
}

/**
 * The explorer's one search box: a block number, a transaction (or block) hash, an address, `job:<id>`, or
 * a known contract's name. One match opens its page; several (a block number both chains have) are listed.
 */
export function SearchBox() {
  const explorer = useExplorer();
  const navigate = useNavigate();
  const [text, setText] = useState("");
  const [outcome, setOutcome] = useState<{ hits?: Hit[]; message?: string; busy?: boolean }>({});

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (text.trim() === "") return;
    setOutcome({ busy: true });
    try {
      const result = await resolve(text, explorer);
      if (typeof result === "string") setOutcome({ message: result });
      else if (result.length === 1) {
        setOutcome({});
        void navigate(result[0].to);
      } else if (result.length === 0) setOutcome({ message: `Nothing found for "${text.trim()}" on either chain.` });
      else setOutcome({ hits: result });
    } catch (error) {
      setOutcome({ message: `The search failed: ${describeError(error)}` });
    }
  };

  return (
    <search className="explorer-search">
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="explorer-search">Search the explorer</label>
        <div className="amount-input">
          <input
            id="explorer-search"
            type="search"
            value={text}
            onChange={(event) => setText(event.target.value)}
            placeholder="Block, transaction, address, job:12, VerificationRegistry"
            aria-describedby="explorer-search-hint"
            autoComplete="off"
            spellCheck={false}
          />
          <button type="submit" disabled={outcome.busy === true}>
            Search
          </button>
        </div>
        <p id="explorer-search-hint" className="hint">
          A block number, a transaction hash, an address, job:&lt;id&gt; or a contract&apos;s name.
        </p>
      </form>
      <div role="status" data-testid="search-outcome">
        {outcome.busy === true && "Searching…"}
        {outcome.message !== undefined && <p className="error">{outcome.message}</p>}
        {outcome.hits !== undefined && (
          <>
            <p>{outcome.hits.length} matches:</p>
            <ul>
              {outcome.hits.map((hit) => (
                <li key={hit.to}>
                  <Link to={hit.to} onClick={() => setOutcome({})}>
                    {hit.text}
                  </Link>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </search>
  );
}
