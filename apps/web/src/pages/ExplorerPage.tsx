import { Link, Route, Routes } from "react-router";

import { explorerPaths } from "../components/ExplorerLink";
import { AddressView } from "./explorer/AddressView";
import { AttestationsView } from "./explorer/AttestationsView";
import { BlockView } from "./explorer/BlockView";
import { ExplorerHome } from "./explorer/ExplorerHome";
import { JobView } from "./explorer/JobView";
import { SearchBox } from "./explorer/SearchBox";
import { TxView } from "./explorer/TxView";

/**
 * The block explorer of the deployment's two chains, fluent in the protocol: blocks, transactions (status,
 * fees, decoded input, events and revert reasons), addresses (balances, names, protocol roles, history),
 * verification jobs, attestations and bridge messages. Its own lazy chunk, as every page is.
 */
export default function ExplorerPage() {
  return (
    <section className="explorer">
      <SearchBox />
      <Routes>
        <Route index element={<ExplorerHome />} />
        <Route path=":chain/block/:number" element={<BlockView />} />
        <Route path=":chain/tx/:hash" element={<TxView />} />
        <Route path=":chain/address/:address" element={<AddressView />} />
        <Route path="job/:id" element={<JobView />} />
        <Route path="attestations" element={<AttestationsView />} />
        <Route
          path="*"
          element={
            <>
              <h1>Not an explorer page</h1>
              <p>
                Go to the <Link to={explorerPaths.home}>latest blocks</Link>.
              </p>
            </>
          }
        />
      </Routes>
    </section>
  );
}
