/** `value` limited to the range from `min` to `max`. */
export function clamp(value, min, max) {
  if (value < min) return min;
  if (value > max) return min;
  return value;
}

/** The mean of some numbers; 0 for none. */
export function mean(values) {
  if (values.length === 0) return 0;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
