// What bin/plateau.js needs from the sources, as one module: bundled by esbuild into one file
// (bin/cli-bundle.js) so that a start loads one module instead of some 300 through tsx.
export { engineNodeFlags, needsEngineRelaunch } from '../engine/node-flags.ts';
export { main } from './cli.ts';
