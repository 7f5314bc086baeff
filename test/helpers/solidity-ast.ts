import { readFile } from "node:fs/promises";
import path from "node:path";

import { artifacts, config } from "hardhat";

/** A node of solc's JSON AST, with the fields the tests read. */
export interface AstNode {
  id?: number;
  nodeType?: string;
  name?: string;
  canonicalName?: string;
  kind?: string;
  constant?: boolean;
  members?: AstNode[];
  value?: AstNode | string | null;
  subdenomination?: string | null;
  referencedDeclaration?: number;
  memberName?: string;
  expression?: AstNode;
  arguments?: AstNode[];
  names?: string[];
  typeName?: AstNode;
  typeDescriptions?: { typeString?: string };
  stateMutability?: string;
  body?: AstNode;
  statements?: AstNode[];
  [key: string]: unknown;
}

/** Every node of `root`, depth first. */
export function nodesOf(root: unknown): AstNode[] {
  const nodes: AstNode[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === "object") {
      const node = value as AstNode;
      if (typeof node.nodeType === "string") nodes.push(node);
      Object.values(node).forEach(visit);
    }
  };
  visit(root);
  return nodes;
}

/**
 * The compiler's view of the build that compiled `contractName` (a name or a fully qualified name): the
 * AST of each of its sources, and which source is the contract's own. Read from Hardhat's build info.
 */
export async function buildAstOf(contractName: string): Promise<{ sources: Record<string, AstNode>; ownSource: string }> {
  const artifact = (await artifacts.readArtifact(contractName)) as { buildInfoId?: string; inputSourceName?: string };
  if (artifact.buildInfoId === undefined || artifact.inputSourceName === undefined) throw new Error(`${contractName} has no build info`);
  const outputPath = path.join(config.paths.artifacts, "build-info", `${artifact.buildInfoId}.output.json`);
  const buildInfo = JSON.parse(await readFile(outputPath, "utf8")) as { output: { sources: Record<string, { ast: AstNode }> } };
  const sources = Object.fromEntries(Object.entries(buildInfo.output.sources).map(([name, source]) => [name, source.ast]));
  return { sources, ownSource: artifact.inputSourceName };
}
