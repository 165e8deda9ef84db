/** How many words `text` has. */
export function wordCount(text) {
  if (text === "") return 0;
  return text.split(" ").length;
}

/** `text` with its first letter in upper case. */
export function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
