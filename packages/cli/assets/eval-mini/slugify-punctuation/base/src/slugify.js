/** Turn a title into a URL slug: lower case, words joined by single dashes. */
export function slugify(title) {
  return title.trim().toLowerCase().split(" ").join("-");
}
