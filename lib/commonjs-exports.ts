// The exports of a CommonJS package loaded with import(), read the same way from the sources
// and from the bundle. Node offers them as named exports (it scans the package's source for
// them) and as `default`, the package's module.exports; a chunk of bin/cli-bundle.js offers
// `default` alone.
export function commonJsExports<T extends object>(namespace: T): T {
  const exports = (namespace as { default?: unknown }).default;
  return exports !== null && typeof exports === 'object' ? (exports as T) : namespace;
}
