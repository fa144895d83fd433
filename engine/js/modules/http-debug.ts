// k6's --http-debug: each request and its response logged as they went over the wire.

import type { IterationContext } from '../context.ts';
import type { TestRuntime } from '../runtime.ts';
import type { RequestSpec } from './http-request-spec.ts';

/**
 * k6's --http-debug: the request and the response as they went over the wire, logged at info
 * with `source=http-debug`; bodies only with --http-debug=full (binary ones as a byte count).
 */
export function logHttpDebug(
  runtime: TestRuntime,
  context: IterationContext | undefined,
  spec: RequestSpec,
  responseHead: string | undefined,
  body: unknown,
): void {
  const full = runtime.httpDebug === 'full';
  const requestLines = [`${spec.method} ${spec.url.path} HTTP/1.1`, `Host: ${spec.url.host}`];
  for (const [name, value] of Object.entries(spec.headers)) requestLines.push(`${name}: ${value}`);
  let text = `Request:\n${requestLines.join('\n')}\n\n`;
  if (full && spec.payload) text += `${spec.payload.toString('utf8')}\n`;
  if (responseHead !== undefined) {
    text += `Response:\n${responseHead}\n\n`;
    if (full && body !== null && body !== undefined) {
      text +=
        typeof body === 'string'
          ? `${body}\n`
          : `[${(body as ArrayBuffer).byteLength} bytes of binary body]\n`;
    }
  }
  const fields: Record<string, string> = { source: 'http-debug' };
  if (context) {
    fields.vu = String(context.vu.idInInstance);
    fields.iter = String(context.vuIterationInInstance);
    if (context.scenario) fields.scenario = context.scenario.name;
  }
  runtime.logger.log('info', text, fields);
}
