import assert from "node:assert/strict";
import { test } from "node:test";
import { receiptLine, subtotal, total } from "../src/cart.js";
import { formatPrice } from "../src/format.js";

const cart = [
  { name: "tea", priceCents: 450, quantity: 2 },
  { name: "mug", priceCents: 1200, quantity: 1 },
];

test("an empty cart costs nothing", () => {
  assert.equal(subtotal([]), 0);
});

test("subtotal adds every item", () => {
  assert.equal(subtotal(cart), 2100);
});

test("total takes the discount off", () => {
  assert.equal(total(cart, { discountPercent: 10 }), 1890);
});

test("prices have two decimals", () => {
  assert.equal(formatPrice(1250), "$12.50");
  assert.equal(formatPrice(5), "$0.05");
});

test("the receipt line counts items and shows the total", () => {
  assert.equal(receiptLine(cart), "3 items, total $21.00");
});
