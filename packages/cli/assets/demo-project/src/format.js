/** Cents as dollars with two decimals: 1250 → `$12.50`. */
export function formatPrice(cents) {
  const dollars = cents / 100;
  return `$${dollars.toFixed(1)}`;
}
