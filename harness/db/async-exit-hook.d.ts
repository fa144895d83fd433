// Types for the one function of async-exit-hook that plateau calls.
declare module 'async-exit-hook' {
  interface ExitHook {
    unhookEvent(event: string): void;
    hookedEvents(): string[];
  }
  const hook: ExitHook;
  export default hook;
}
