import { getAddress, isAddress, isHexString } from "ethers";
import { z } from "zod";

import { logLevel, rpcUrl } from "../common/config-fields.ts";
import { redactConfig, secret } from "../common/config-redaction.ts";
import { parseEnvironment } from "../common/environment.ts";

const schema = z
  .object({
    /** The challenger's key: the account governance granted CHALLENGER_ROLE on NodeRegistry, with staked collateral. */
    CHALLENGER_KEY: secret(z.string().refine((value) => isHexString(value, 32), "a private key: 0x and 64 hex digits")),
    L2_RPC_URL: rpcUrl(),
    VERIFICATION_REGISTRY: z
      .string()
      .refine((value) => isAddress(value), "not an EVM address")
      .transform((value) => getAddress(value)),
    /** A JSON file of what challenges ask about (`ChallengeTargets`: never the demo holdings). */
    CHALLENGE_TARGETS: z.string().min(1),
    /** The mean time between two bursts; the times are random (exponential), so nodes cannot tell when. */
    CHALLENGE_MEAN_INTERVAL_SECONDS: z.coerce.number().positive().max(86_400).default(600),
    /** The jobs of one burst, at random between these two (inclusive): capacity shows under load. */
    CHALLENGE_BURST_MIN: z.coerce.number().int().min(1).max(64).default(2),
    CHALLENGE_BURST_MAX: z.coerce.number().int().min(1).max(64).default(5),
    LOG_LEVEL: logLevel(),
  })
  .superRefine((config, context) => {
    if (config.CHALLENGE_BURST_MAX < config.CHALLENGE_BURST_MIN)
      context.addIssue({ code: "custom", path: ["CHALLENGE_BURST_MAX"], message: "at least CHALLENGE_BURST_MIN" });
  });

export type ChallengerConfig = Readonly<z.infer<typeof schema>>;

/** Parses the challenger's configuration from the environment; every problem is listed at once. */
export function loadChallengerConfig(env: NodeJS.ProcessEnv): ChallengerConfig {
  return parseEnvironment(schema, env, "challenger configuration");
}

/** The configuration as it may be logged: the key never. */
export function redactedChallengerConfig(config: ChallengerConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}
