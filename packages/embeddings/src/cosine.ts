/**
 * Cosine similarity of two equal-length vectors, in [-1, 1].
 * Returns 0 when either vector has zero length (no direction to compare).
 */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) {
    throw new RangeError(`cosineSimilarity: vector lengths differ (${a.length} vs ${b.length})`);
  }
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  const cos = dot / (Math.sqrt(normA) * Math.sqrt(normB));
  // Clamp floating-point drift so callers can rely on the documented range.
  return Math.max(-1, Math.min(1, cos));
}

/**
 * Scales a vector to unit (L2) length, returning a new array.
 * Throws if the vector contains a non-finite value or has zero length,
 * since neither can be stored or compared meaningfully.
 */
export function l2Normalize(vector: readonly number[]): number[] {
  let sumSquares = 0;
  for (const value of vector) {
    if (!Number.isFinite(value)) {
      throw new RangeError("l2Normalize: vector contains a non-finite value");
    }
    sumSquares += value * value;
  }
  if (sumSquares === 0) {
    throw new RangeError("l2Normalize: cannot normalise a zero vector");
  }
  const inverse = 1 / Math.sqrt(sumSquares);
  return vector.map((value) => value * inverse);
}
