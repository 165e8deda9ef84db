import { domainNetworkAttacks, networkAttacks } from "./test-support/network-attacks.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("network and socket attacks through bubblewrap", skipReason, networkAttacks, {
  jobsToo: true,
});
describeAttacks(
  "network attacks past a domain list through bubblewrap",
  skipReason,
  domainNetworkAttacks,
  { warmToo: false, jobsToo: true },
);
