// `node scripts/rehearsal-copy.ts <folder>`: copies the project for the rehearsal of the live deployment
// (src/devnet/rehearsal/project-copy.ts) into <folder>, which must not exist. npm test runs it right after
// the plain build: the coverage build that follows replaces the build output, and the operator's scripts
// would compile every contract again in a copy made then. test/ts/rehearsal/Rehearsal.ts uses the copy
// named by AVN_REHEARSAL_COPY and removes it.
import path from "node:path";

import { copyProject } from "../src/devnet/rehearsal/project-copy.ts";

const into = process.argv[2];
if (into === undefined || into === "") {
  console.error("usage: node scripts/rehearsal-copy.ts <folder that does not exist yet>");
  process.exit(2);
}
const copy = await copyProject(path.resolve(import.meta.dirname, ".."), { into: path.resolve(into) });
console.log(`Project copied for the rehearsal to ${copy.root}`);
