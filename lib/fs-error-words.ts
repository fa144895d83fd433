// A filesystem error in words, for messages that name the problem and not only its code.

const WORDS: Record<string, string> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the disk',
  EDQUOT: 'the disk quota is used up',
  ENOTDIR: 'a part of the path is a file',
  EPIPE: 'its reader closed it',
};

/** `the file system is read-only (EROFS)`; the error's own message for other errors. */
export function why(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && WORDS[code] ? `${WORDS[code]} (${code})` : (error as Error).message;
}
