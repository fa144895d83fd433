// The types every part of plateau shares. No runtime dependencies.

export * from './analysis.ts';
export * from './curve-fit.ts';
export * from './database.ts';
export * from './errors.ts';
export * from './exit-codes.ts';
export * from './generator-cpu.ts';
export * from './probe.ts';
export * from './resources.ts';
export * from './run-manifest.ts';
export * from './schema.ts';
export * from './server-step-report.ts';
export * from './sweep.ts';
