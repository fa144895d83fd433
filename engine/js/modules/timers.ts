// The `k6/timers` module: Node's own timers, which k6 also exposes as globals since v0.51.
export function createTimersModule() {
  const exports = {
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
  };
  return { default: exports, ...exports };
}
