/**
 * Escaping for the `<tool_output tool="...">...</tool_output>` frame the runtime puts around every
 * tool result. The frame only separates data from the runtime's words if nothing inside it can
 * pass for the frame's own tags, to a strict parser or to a model reading leniently.
 */

/** The tag name of the frame, as it is matched after folding. */
const TAG_NAME = "tool_output";

/**
 * Characters a reader skips without noticing: whitespace, control characters, format characters
 * (zero-width space, joiners, word joiner, BOM, soft hyphen, bidi marks) and the other code points
 * Unicode says to render as nothing.
 */
const IGNORABLE = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;

/**
 * The characters that fold to `<` under NFKC (the ASCII one and its small and fullwidth forms),
 * each with the reference it is written as when it starts a tag.
 */
const LEADS: Readonly<Record<string, string>> = {
  "<": "&lt;",
  "\uFE64": "&#xfe64;",
  "\uFF1C": "&#xff1c;",
};
const LEAD_BY_REFERENCE = new Map(Object.entries(LEADS).map(([lead, ref]) => [ref, lead]));
const CANDIDATE = /[<&\uFE64\uFF1C]/g;

/**
 * Escape an attribute value of the frame: quotes, `&`, `<`, `>` and every character outside
 * printable ASCII (control characters, and fullwidth or other look-alike brackets and quotes) as
 * XML references, so the value can neither end the attribute nor the tag, nor open another.
 */
export function escapeFrameAttribute(value: string): string {
  return value.replace(/[^\x20-\x7e]|["'&<>]/gu, (character) => {
    switch (character) {
      case "&":
        return "&amp;";
      case '"':
        return "&quot;";
      case "'":
        return "&apos;";
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      default:
        return `&#x${(character.codePointAt(0) ?? 0).toString(16)};`;
    }
  });
}

/**
 * Neutralise everything in `text` that a lenient reader could take for an opening or closing
 * frame tag: a `<` (or its fullwidth or small form), then an optional `/`, then `tool_output`, in
 * any case, in fullwidth or other compatibility forms (compared after NFKC), with whitespace,
 * zero-width and other format characters anywhere between the letters and around the slash.
 *
 * How: the tag's first character becomes a reference (`<` → `&lt;`, `＜` → `&#xff1c;`), so the
 * text still reads the same but no longer holds a tag; an `&lt;`-style reference that already
 * starts such a tag gets one more `amp;` (`&lt;/tool_output` → `&amp;lt;/tool_output`), so the
 * escaping is reversible ({@link restoreFrameTags}) and nothing else in the text changes.
 */
export function neutralizeFrameTags(text: string): string {
  return rewriteTagStarts(text, (lead) =>
    lead.startsWith("&") ? `&amp;${lead.slice(1)}` : (LEADS[lead] ?? lead),
  );
}

/** Undo {@link neutralizeFrameTags}: `restoreFrameTags(neutralizeFrameTags(text)) === text`. */
export function restoreFrameTags(text: string): string {
  return rewriteTagStarts(text, (lead) => {
    if (lead.startsWith("&amp;")) return `&${lead.slice("&amp;".length)}`;
    return LEAD_BY_REFERENCE.get(lead) ?? lead;
  });
}

/** Replace the first character (or reference) of every frame-like tag in `text`. */
function rewriteTagStarts(text: string, rewrite: (lead: string) => string): string {
  let result = "";
  let copied = 0;
  for (const match of text.matchAll(CANDIDATE)) {
    const start = match.index;
    if (start < copied) continue;
    const leadEnd = leadEndAt(text, start);
    if (leadEnd === undefined || !tagNameFollows(text, leadEnd)) continue;
    result += text.slice(copied, start) + rewrite(text.slice(start, leadEnd));
    copied = leadEnd;
  }
  return copied === 0 ? text : result + text.slice(copied);
}

/**
 * Where a tag's first character ends, when one starts at `index`: a `<`-like character, or a
 * reference {@link neutralizeFrameTags} writes for one (`&lt;`, `&#xff1c;`, `&#xfe64;`) behind
 * any number of `amp;`.
 */
function leadEndAt(text: string, index: number): number | undefined {
  const character = text[index] ?? "";
  if (character !== "&") return character in LEADS ? index + 1 : undefined;
  let cursor = index + 1;
  while (text.startsWith("amp;", cursor)) cursor += "amp;".length;
  for (const reference of LEAD_BY_REFERENCE.keys()) {
    if (text.startsWith(reference.slice(1), cursor)) return cursor + reference.length - 1;
  }
  return undefined;
}

/** Whether `/`? and `tool_output` follow `index`, after folding and skipping ignorables. */
function tagNameFollows(text: string, index: number): boolean {
  let matched = 0;
  let slashAllowed = true;
  let cursor = index;
  while (cursor < text.length) {
    const codePoint = text.codePointAt(cursor) ?? 0;
    const character = String.fromCodePoint(codePoint);
    cursor += character.length;
    for (const folded of foldCharacter(character)) {
      if (IGNORABLE.test(folded)) continue;
      if (folded === "/" && slashAllowed) {
        slashAllowed = false;
        continue;
      }
      if (folded !== TAG_NAME[matched]) return false;
      slashAllowed = false;
      matched += 1;
      if (matched === TAG_NAME.length) return true;
    }
  }
  return false;
}

/** One character as a lenient reader sees it: NFKC (fullwidth → ASCII), then lower case. */
function foldCharacter(character: string): string {
  if (character.charCodeAt(0) < 0x80) return character.toLowerCase();
  return character.normalize("NFKC").toLowerCase();
}
