/**
 * A byte count as a person (or a model) reads it: `262,144 bytes (256 KiB)`, `4,194,304 bytes
 * (4 MiB)`, `3,716 bytes`; the unit in parentheses only when the count is a whole number of it.
 */
export function formatBytes(count: number): string {
  const mebibytes = count / (1024 * 1024);
  const kibibytes = count / 1024;
  const unit = Number.isInteger(mebibytes)
    ? ` (${mebibytes} MiB)`
    : Number.isInteger(kibibytes)
      ? ` (${kibibytes} KiB)`
      : "";
  return `${count.toLocaleString("en-US")} bytes${count === 0 ? "" : unit}`;
}
