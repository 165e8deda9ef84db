// The hunks of a unified diff as the perturbations and the edit cases of the benchmark see them.

/** The diff's hunks: header numbers and body lines (with their marker character). */
export function splitHunks(diff) {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const head = [];
  const hunks = [];
  for (const line of lines) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(line);
    if (header !== null) {
      hunks.push({
        oldStart: Number(header[1]),
        oldCount: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newCount: header[4] === undefined ? 1 : Number(header[4]),
        tail: header[5],
        body: [],
      });
    } else if (hunks.length === 0) head.push(line);
    else hunks.at(-1).body.push(line);
  }
  return { head, hunks };
}

export function joinHunks({ head, hunks }, header = defaultHeader) {
  const lines = [...head];
  for (const hunk of hunks) lines.push(header(hunk), ...hunk.body);
  return `${lines.join("\n")}\n`;
}

function defaultHeader(hunk) {
  return `@@ -${hunk.oldStart},${hunk.oldCount} +${hunk.newStart},${hunk.newCount} @@${hunk.tail}`;
}

export function recount(hunk) {
  let oldCount = 0;
  let newCount = 0;
  for (const line of hunk.body) {
    if (line.startsWith("\\")) continue;
    if (!line.startsWith("+")) oldCount += 1;
    if (!line.startsWith("-")) newCount += 1;
  }
  return { ...hunk, oldCount, newCount };
}
