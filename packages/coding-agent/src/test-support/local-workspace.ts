import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";

/** A temporary workspace behind a local `workspace-write` client, with helpers over its files. */
export async function localWorkspace() {
  const root = await useTempDir("pleach-syntax-");
  const client = await createLocalSandbox({ root, mode: "workspace-write" });
  const file = (name: string) => path.join(root, name);
  return {
    client,
    put: (name: string, content: string) => writeFile(file(name), content),
    bytes: (name: string) => readFile(file(name)),
    text: (name: string) => readFile(file(name), "utf8"),
  };
}
