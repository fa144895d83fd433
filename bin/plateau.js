#!/usr/bin/env node
// Entry point: loads the TypeScript sources as bundles built on first use (bin/cli-bundle.js),
// so a checkout needs no build step. `engine run` relaunches itself with V8 flags before
// loading the CLI at all.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { openSources } from './cli-bundle.js';

const sources = await openSources();
const { engineNodeFlags, needsEngineRelaunch } = await sources.load('node-flags');

let relaunch = false;
try {
  relaunch = needsEngineRelaunch(process.argv, process.execArgv);
} catch (error) {
  // A bad PLATEAU_ENGINE_GC: say what is wrong and how to fix it, as the CLI does.
  process.stderr.write(`plateau: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}`);
  process.exit(104);
}
if (relaunch) {
  // `engine run` needs V8 flags that only a process's command line can set: run it in a
  // child that has them. The child gets its own process group so that a terminal's Ctrl-C
  // reaches it once, through this relay, exactly as if it had been pressed there.
  const child = spawn(
    process.execPath,
    [...process.execArgv, ...engineNodeFlags(), ...process.argv.slice(1)],
    { stdio: 'inherit', detached: true },
  );
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
  });
} else {
  // `plateau … | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const { main } = await sources.load('cli');
  await main(process.argv);
}
