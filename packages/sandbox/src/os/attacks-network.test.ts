import { networkAttacks } from "./test-support/network-attacks.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("network and socket attacks through bubblewrap", skipReason, networkAttacks);
