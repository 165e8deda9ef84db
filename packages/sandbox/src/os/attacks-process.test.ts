import { processAttacks } from "./test-support/process-attacks.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("process and environment attacks through bubblewrap", skipReason, processAttacks);
