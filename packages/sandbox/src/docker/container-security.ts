import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DockerCommand } from "./docker-cli.js";
import { sandboxSeccompProfile } from "./seccomp.js";

/**
 * The `docker run` security options of a provider's containers: no new privileges and no
 * capabilities always; for a confined server (bubblewrap inside), what bubblewrap needs. The
 * engine's security options are asked once, and the seccomp profile written once per content
 * into the provider's private folder `stateFolder`.
 */
export function containerSecurity({
  run,
  stateFolder,
}: {
  run: DockerCommand;
  stateFolder: string;
}): (container: { confined: boolean; uid: number; owning: boolean }) => Promise<string[]> {
  let engineOptions: Promise<string[]> | undefined;
  /** The engine's security options (`name=apparmor`, `name=rootless`, ...), asked once. */
  const engineSecurity = () => {
    engineOptions ??= run(["info", "--format", "{{json .SecurityOptions}}"]).then(
      (text) => {
        const parsed: unknown = JSON.parse(text || "[]");
        return Array.isArray(parsed) ? parsed.map(String) : [];
      },
      () => [],
    );
    return engineOptions;
  };

  /** The seccomp profile's file in the private folder, written once per content. */
  const seccompFile = async (): Promise<string> => {
    const profile = sandboxSeccompProfile();
    const digest = createHash("sha256").update(profile).digest("hex").slice(0, 16);
    const file = path.join(stateFolder, `seccomp-${digest}.json`);
    if (!existsSync(file)) {
      const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(temporary, profile, { mode: 0o600, flag: "wx" });
      await rename(temporary, file);
    }
    return file;
  };

  return async ({ confined, uid, owning }) => {
    const security = ["--security-opt", "no-new-privileges", "--cap-drop", "ALL"];
    // The runtime's launcher, as root, gives the image's workspace to the user it then becomes
    // (setuid drops these for good, and no-new-privileges keeps them from coming back).
    if (owning) security.push("--cap-add", "CHOWN", "--cap-add", "SETUID", "--cap-add", "SETGID");
    if (confined) {
      // bubblewrap inside needs user namespaces and mounts (seccomp), a /proc it may mount again
      // (systempaths: Docker's masks over /proc make the kernel refuse a new procfs in a user
      // namespace, "Can't mount proc on /newroot/proc"; no other option of the engine unmasks it),
      // and no AppArmor profile that denies mount. An unmasked /proc/sys is writable by the
      // container's root only (kernel.core_pattern: host root), which is why a foreign image's
      // container never runs as root (docker-provider) and every process has no capability.
      security.push("--security-opt", `seccomp=${await seccompFile()}`);
      security.push("--security-opt", "systempaths=unconfined");
      if ((await engineSecurity()).some((option) => option.startsWith("name=apparmor"))) {
        security.push("--security-opt", "apparmor=unconfined");
      }
      // A root-owned workspace: bubblewrap maps uid 0 into its namespace, which needs CAP_SETFCAP.
      if (uid === 0) security.push("--cap-add", "SETFCAP");
    }
    return security;
  };
}
