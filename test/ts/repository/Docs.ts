import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { expect } from "chai";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

/** The relative targets of a Markdown file's links (`[text](target)`), without their anchors; web links left out. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith("#"))
    .map((target) => target.split("#")[0]);
}

describe("the README and the docs a newcomer reads", function () {
  it("opens the README with what the project is and the two commands", function () {
    const readme = read("README.md");
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(sections[0]).to.equal("The two commands");
    const twoCommands = readme.slice(readme.indexOf("## The two commands"));
    expect(twoCommands).to.match(/```sh\nnpm start[^\n]*\nnpm test[^\n]*\n```/);
    expect(readme.indexOf("## The two commands")).to.be.below(readme.split("\n").slice(0, 15).join("\n").length);
  });

  it("indexes every page of docs/ in docs/README.md, and links it from the README", function () {
    const pages = readdirSync(path.join(root, "docs"))
      .filter((file) => file.endsWith(".md") && file !== "README.md")
      .sort();
    const indexed = relativeLinks(read("docs/README.md")).filter((target) => !target.startsWith(".."));
    expect([...new Set(indexed)].sort()).to.deep.equal(pages);
    expect(relativeLinks(read("README.md"))).to.include("docs/README.md");
  });

  it("links only to files that exist, from the README, CONTRIBUTING.md and every page of docs/", function () {
    const files = ["README.md", "CONTRIBUTING.md", ...readdirSync(path.join(root, "docs")).map((file) => `docs/${file}`)].filter((file) =>
      file.endsWith(".md"),
    );
    const broken = files.flatMap((file) =>
      relativeLinks(read(file))
        .filter((target) => target !== "" && !existsSync(path.join(root, path.dirname(file), target)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(broken).to.deep.equal([]);
  });
});
