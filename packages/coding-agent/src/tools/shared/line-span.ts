/** `line N` for one line, `lines N-M` for several: how a range of 1-based lines is named to the model. */
export function lineSpan(first: number, last: number): string {
  return first === last ? `line ${first}` : `lines ${first}-${last}`;
}
