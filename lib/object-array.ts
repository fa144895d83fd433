// An empty array that V8 already treats as an array of objects.
//
// A `[]` literal starts out holding small integers ("elements kind" PACKED_SMI) and changes
// kind, and so its hidden class, at its first object. V8 also learns at each literal to
// make later arrays there in the kind they end up in. So the arrays a literal made early
// (the test's own metrics, made by the script's init before the engine's warm-up
// rehearsal) have a different hidden class from those it made later (the rehearsal's),
// and code optimized on the later ones is thrown away at the first use of an early one.
// An array's kind never goes back, so one that is born holding an object stays with the
// later ones.

/** An empty array born as an array of objects (see the note above). */
export function emptyObjectArray<T>(): T[] {
  const list: T[] = [Object.prototype as T];
  list.length = 0;
  return list;
}
