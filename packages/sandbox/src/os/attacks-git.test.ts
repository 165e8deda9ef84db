import { gitAttacks } from "./test-support/git-attacks.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("git attacks through bubblewrap", skipReason, gitAttacks, { gitWritesToo: true });
