import { filesystemAttacks } from "./test-support/filesystem-attacks.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("file system attacks through bubblewrap", skipReason, filesystemAttacks);
