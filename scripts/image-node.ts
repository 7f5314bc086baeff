// `npm run image:node`: builds the circuit node's image (avn-node) from the Dockerfile, with the Docker or Podman
// engine of this machine when one answers, else daemonless with buildah from a Node 22 base it makes here once
// (src/tooling/image/). Then prints the image's size, its base's and its layers. `--quiet` prints only the steps
// of the build, not its output. AVN_IMAGE_ENGINE=docker|podman|buildah picks the engine.
import path from "node:path";

import { buildNodeImage } from "../src/tooling/image/build.ts";
import { detectEngine, NoImageToolError } from "../src/tooling/image/engine.ts";
import { formatReport, imageReport } from "../src/tooling/image/report.ts";

const root = path.resolve(import.meta.dirname, "..");
const quiet = process.argv.includes("--quiet");
const unknown = process.argv.slice(2).filter((argument) => argument !== "--quiet");
if (unknown.length > 0) {
  console.error(`usage: npm run image:node [-- --quiet]   (unknown: ${unknown.join(" ")})`);
  process.exit(2);
}

try {
  const engine = await detectEngine();
  if (engine === undefined) throw new NoImageToolError();
  console.log(`Building the node's image with ${engine.kind}.`);
  const built = await buildNodeImage({
    engine,
    root,
    onProgress: (line) => console.log(line),
    onOutput: quiet ? undefined : (line) => console.log(`  ${line}`),
  });
  const report = await imageReport(engine, built.tag, engine.kind === "buildah" ? built.base : undefined);
  console.log(
    [
      (built.upToDate ? `${built.tag} was up to date` : `Built ${built.tag} with ${built.engine} in ${built.buildSeconds.toFixed(1)} s`) +
        (built.engine === "buildah" ? ` (base ${built.baseMade ? `made in ${built.baseSeconds.toFixed(1)} s` : "reused"})` : "") +
        ".",
      ...formatReport(report),
    ].join("\n"),
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
