// The OS sandbox's attack suites over the E2B face (`createSandboxServer({ protocol: "e2b" })`,
// driven by the e2b SDK): a command run through E2B is exactly as confined as one through
// pleach's tools. The cases that cannot apply through a server are skipped, saying why (the same
// ones as over Docker's server, for the same reasons).
import { filesystemAttacks } from "../../os/test-support/filesystem-attacks.js";
import { gitAttacks } from "../../os/test-support/git-attacks.js";
import { gitRuleAttacks } from "../../os/test-support/git-rule-attacks.js";
import { networkAttacks } from "../../os/test-support/network-attacks.js";
import { processAttacks } from "../../os/test-support/process-attacks.js";
import { attackSuiteSkipReason } from "../../os/test-support/suite.js";
import { describeE2BAttacks } from "./test-support/attack-fixture.js";

const skipReason = await attackSuiteSkipReason();
const HOST_ENVIRONMENT = "it runs with a host environment, which the server's commands never see";
const OWN_WRAPPER = "it passes a wrapper of its own, and the server has one";

const SKIPS = {
  filesystem: {
    "does not run a fake bwrap from PATH or from the workspace": HOST_ENVIRONMENT,
    "cannot read the credential stores of the user's home, also through a link, in either confined mode": `${HOST_ENVIRONMENT} (HOME)`,
  },
  git: {
    "protects on the next call a nested .git made between calls (changes made just now)": `${OWN_WRAPPER} (with a host-facts cache of its own)`,
    "protects on the next call a nested .git made between calls (changes made long enough ago that only the stamps tell)": `${OWN_WRAPPER} (with a host-facts cache of its own)`,
    "protects the hooks folder named where git finds it: an included file, the user's git config": `${HOST_ENVIRONMENT} (HOME)`,
    "cannot blind the scan with a folder it cannot list (chmod 000 above a nested repository)":
      OWN_WRAPPER,
    "refuses a workspace past the folder limit rather than protecting it in part": `${OWN_WRAPPER} (limited to 300 folders)`,
  },
  gitRules: {},
  network: {
    "cannot reach the agent socket named by SSH_AUTH_SOCK, and does not inherit the variable": `${HOST_ENVIRONMENT} (SSH_AUTH_SOCK)`,
  },
  process: {
    "inherits only allow-listed host variables, and a caller's LD_PRELOAD never reaches the launcher": `${HOST_ENVIRONMENT}, and it asks a local wrapper for its invocation`,
  },
} as const;

for (const [title, cases, skip] of [
  ["file system attacks", filesystemAttacks, SKIPS.filesystem],
  ["git attacks", gitAttacks, SKIPS.git],
  ["git repositories by git's own rules", gitRuleAttacks, SKIPS.gitRules],
  ["network and socket attacks", networkAttacks, SKIPS.network],
  ["process and environment attacks", processAttacks, SKIPS.process],
] as const) {
  describeE2BAttacks(`${title} through the E2B face`, cases, { skipReason, skip });
}
