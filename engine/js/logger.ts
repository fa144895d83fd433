// k6-style log lines on stderr (logrus text format).

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

/** Where engine and script log lines go. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, string>): void;
}

/** `logger` without its debug lines: k6 shows them only with --verbose. */
export function withoutDebug(logger: Logger): Logger {
  return {
    log(level, message, fields) {
      if (level !== 'debug') logger.log(level, message, fields);
    },
  };
}

const SHORT: Record<LogLevel, string> = { debug: 'DEBU', info: 'INFO', warning: 'WARN', error: 'ERRO' };

/** k6's --log-format: its text lines (default), `json` (one object a line) or `raw` (the message alone). */
export type LogFormat = 'text' | 'json' | 'raw';

/**
 * A logger writing like k6: `WARN[0003] message  key=value` on a terminal, and
 * `time="…" level=warning msg="…"` otherwise (seconds count from `startMs`); in `json`
 * format `{"level":…,"msg":…,"time":…}` with the fields as keys; in `raw` the message alone.
 */
export function stderrLogger(
  startMs: number,
  write: (line: string) => void = (l) => process.stderr.write(l),
  tty = process.stderr.isTTY === true,
  format: LogFormat = 'text',
): Logger {
  return {
    log(level, message, fields = {}) {
      if (format === 'raw') {
        write(`${message}\n`);
        return;
      }
      if (format === 'json') {
        write(`${JSON.stringify({ ...fields, level, msg: message, time: new Date().toISOString() })}\n`);
        return;
      }
      const extra = Object.entries(fields)
        .map(([k, v]) => ` ${k}=${v}`)
        .join('');
      if (tty) {
        const seconds = String(Math.max(0, Math.floor((Date.now() - startMs) / 1000))).padStart(4, '0');
        write(`${SHORT[level]}[${seconds}] ${message}${extra ? ` ${extra}` : ''}\n`);
      } else {
        write(`time="${new Date().toISOString()}" level=${level} msg=${JSON.stringify(message)}${extra}\n`);
      }
    },
  };
}
