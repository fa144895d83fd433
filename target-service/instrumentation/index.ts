// Public API: instrument your own Node service the way the reference service is measured.
export { instrumentPool } from './pool-instrumentation.ts';
export { RequestTrace } from './request-trace.ts';
export { StepInstrumentation, type StepInstrumentationOptions, sendJson } from './step-instrumentation.ts';
export { MAX_STEP_BUCKETS, SPECIAL_STEPS, stepKeyFromHeader } from './step-key.ts';
export { StepRecorder, type StepRecorderOptions } from './step-recorder.ts';
export { currentTrace, runWithTrace } from './trace-context.ts';
