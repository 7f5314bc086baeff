// `npm run kit:pack`: packs the integrators' kit into .kit/ (`@avn/sdk`, built first, and `@avn/contracts`),
// checks that each tarball holds every file its exports and README name, and prints each one's size. The
// consumer example (examples/consumer) installs the two tarballs from there.
import path from "node:path";

import { KIT_PACKAGES, packAndCheck } from "../src/tooling/kit-pack.ts";

const root = path.resolve(import.meta.dirname, "..");
const destination = path.join(root, ".kit");
for (const folder of KIT_PACKAGES) {
  const packed = await packAndCheck(path.join(root, folder), destination);
  console.log(
    `${packed.name}@${packed.version}: ${path.relative(root, packed.tarball)}, ${packed.size} bytes packed, ` +
      `${packed.unpackedSize} unpacked, ${packed.files.length} files`,
  );
}
