#!/usr/bin/env node
// Entry point: runs the TypeScript sources through tsx, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
// `plateau … | head` closes the pipe early: that is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const { main } = await import('../harness/cli.ts');
await main(process.argv);
