import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A Go module in `folder` that imports a vendored dependency (no network, no module proxy):
 * `go build` compiles both, through the build cache.
 */
export async function writeVendoredGoModule(folder: string): Promise<void> {
  const dependency = path.join(folder, "vendor", "example.com", "dep");
  await mkdir(dependency, { recursive: true });
  await writeFile(
    path.join(folder, "go.mod"),
    "module example.com/app\n\ngo 1.19\n\nrequire example.com/dep v0.1.0\n",
  );
  await writeFile(
    path.join(folder, "vendor", "modules.txt"),
    "# example.com/dep v0.1.0\n## explicit\nexample.com/dep\n",
  );
  await writeFile(
    path.join(dependency, "dep.go"),
    'package dep\n\nimport "strings"\n\n// Shout is upper case.\nfunc Shout(text string) string { return strings.ToUpper(text) + "!" }\n',
  );
  await writeFile(
    path.join(folder, "main.go"),
    'package main\n\nimport (\n\t"fmt"\n\t"net/http"\n\n\t"example.com/dep"\n)\n\nfunc main() { fmt.Println(dep.Shout("hi"), http.StatusOK) }\n',
  );
}

/**
 * A source archive `tinypkg-0.1.tar.gz` in `folder`, made by Python's own `tarfile`: its
 * `pyproject.toml` names an in-tree build backend that writes the wheel with `zipfile`, so pip
 * builds it (and keeps the wheel in its cache) with nothing to fetch. Returns its path.
 */
export async function writePythonSourceArchive(folder: string): Promise<string> {
  const source = path.join(folder, "tinypkg-0.1");
  await mkdir(path.join(source, "tinypkg"), { recursive: true });
  await writeFile(path.join(source, "tinypkg", "__init__.py"), "X = 1\n");
  await writeFile(
    path.join(source, "pyproject.toml"),
    '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
  );
  await writeFile(path.join(source, "PKG-INFO"), METADATA);
  await writeFile(path.join(source, "backend.py"), BACKEND);
  const archive = path.join(folder, "tinypkg-0.1.tar.gz");
  execFileSync("python3", [
    "-c",
    "import sys, tarfile\nwith tarfile.open(sys.argv[1], 'w:gz') as t: t.add(sys.argv[2], 'tinypkg-0.1')",
    archive,
    source,
  ]);
  return archive;
}

const METADATA = "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n";

/** A PEP 517 backend of a few lines: the wheel of `tinypkg`, by hand. */
const BACKEND = `import base64, hashlib, os, zipfile

METADATA = ${JSON.stringify(METADATA)}
WHEEL = "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
INFO = "tinypkg-0.1.dist-info"

def _files():
    with open(os.path.join("tinypkg", "__init__.py")) as source:
        code = source.read()
    return {"tinypkg/__init__.py": code, INFO + "/METADATA": METADATA, INFO + "/WHEEL": WHEEL}

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    os.makedirs(os.path.join(metadata_directory, INFO), exist_ok=True)
    for name in ("METADATA", "WHEEL"):
        with open(os.path.join(metadata_directory, INFO, name), "w") as out:
            out.write(_files()[INFO + "/" + name])
    return INFO

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "tinypkg-0.1-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, text in _files().items():
            wheel.writestr(path, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
            records.append("%s,sha256=%s,%d" % (path, digest.decode(), len(text)))
        records.append(INFO + "/RECORD,,")
        wheel.writestr(INFO + "/RECORD", "\\n".join(records) + "\\n")
    return name
`;

/** A package `tiny` packed by `npm pack` into `folder`; returns the tarball's path. */
export async function writeNpmTarball(folder: string): Promise<string> {
  const source = path.join(folder, "tiny");
  await mkdir(source, { recursive: true });
  await writeFile(
    path.join(source, "package.json"),
    JSON.stringify({ name: "tiny", version: "1.0.0", main: "index.js" }),
  );
  await writeFile(path.join(source, "index.js"), "module.exports = 42;\n");
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", folder], {
    cwd: source,
    encoding: "utf8",
  }).trim();
  return path.join(folder, name);
}
