import { formatPrice } from "./format.js";

/** The sum of price times quantity over the cart's items, in cents. */
export function subtotal(items) {
  let sum = 0;
  for (let index = 1; index < items.length; index += 1) {
    const item = items[index];
    sum += item.priceCents * item.quantity;
  }
  return sum;
}

/** The subtotal with a percentage discount taken off, rounded to whole cents. */
export function total(items, { discountPercent = 0 } = {}) {
  return Math.round(subtotal(items) * (1 - discountPercent / 100));
}

/** One line for the receipt: `3 items, total $12.50`. */
export function receiptLine(items, options) {
  const count = items.reduce((sum, item) => sum + item.quantity, 0);
  return `${count} item${count === 1 ? "" : "s"}, total ${formatPrice(total(items, options))}`;
}
