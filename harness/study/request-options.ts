// The request a study sends: `--endpoint`, `--method`, `--body`, `--header`,
// `--expect-status`, shared by `plateau run`, `check` and `confirm`. Without them a study
// sends the reference service's `GET /statement?account=N`.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ConfigProblem, SourcedValue, StudyRequest } from '../../contract/index.ts';
import { METHODS, parseExpectStatus } from '../../scripts/lib/profiles.ts';

export interface RequestFlags {
  endpoint?: string;
  method?: string;
  body?: string;
  header?: string[];
  expectStatus?: string;
}

/** The flags that say what the request is: given any, the recorded request is not reused. */
export const REQUEST_FLAG_KEYS = ['endpoint', 'method', 'body', 'header', 'expectStatus'] as const;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the request flags to a command. */
export function addRequestOptions(command: Command): Command {
  return command
    .option(
      '--endpoint <path>',
      'the path requests go to on the target, e.g. /api/orders (default: /statement?account=N, the reference service)',
    )
    .option('--method <method>', `the request method: ${METHODS.join(', ')} (default GET)`)
    .option('--body <@file|text>', 'the request body: @path/to/body.json for a file, or the text itself')
    .option('--header <Name: value>', 'a header every request carries (repeatable)', collect)
    .option(
      '--expect-status <list>',
      "statuses that count as success, e.g. 200,201 or 200-299 (default k6's 200-399)",
    );
}

/**
 * The request of a study from its flags and `--target`. A path in `--target` is the
 * endpoint when `--endpoint` is not given; a study of anything but the reference service's
 * endpoint sends no `account` parameter. Problems name the flag and the form.
 */
export function planRequest(
  flags: RequestFlags,
  target: string | undefined,
  problems: ConfigProblem[],
  sources: Record<string, SourcedValue>,
): { request: StudyRequest; baseUrl: string | undefined } {
  let baseUrl = target;
  let endpoint = flags.endpoint;
  if (target !== undefined && /^https?:\/\/[^/]+/.test(target)) {
    const url = new URL(target);
    if (url.pathname !== '/' || url.search !== '') {
      baseUrl = url.origin;
      if (endpoint === undefined) endpoint = `${url.pathname}${url.search}`;
      else {
        problems.push({
          setting: '--target',
          message: `${target} has a path, and --endpoint ${endpoint} is given too`,
          hint: 'give the path once: --target http://host:port --endpoint /path',
        });
      }
    } else baseUrl = url.origin;
  }
  if (endpoint !== undefined && !endpoint.startsWith('/')) {
    problems.push({
      setting: '--endpoint',
      message: `"${endpoint}" is not a path`,
      hint: 'start it with /, e.g. --endpoint /api/orders',
    });
  }
  const method = (flags.method ?? 'GET').toUpperCase();
  if (!(METHODS as readonly string[]).includes(method)) {
    problems.push({
      setting: '--method',
      message: `"${flags.method}" is not accepted`,
      hint: `use one of ${METHODS.join(', ')}`,
    });
  }
  const headers: Record<string, string> = {};
  for (const header of flags.header ?? []) {
    const colon = header.indexOf(':');
    const name = colon < 0 ? '' : header.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      problems.push({
        setting: '--header',
        message: `"${header}" is not Name: value`,
        hint: "e.g. --header 'Content-Type: application/json'",
      });
      continue;
    }
    headers[name] = header.slice(colon + 1).trim();
  }
  let body: StudyRequest['body'];
  if (flags.body !== undefined) {
    if (flags.body.startsWith('@')) {
      const file = resolve(flags.body.slice(1));
      if (!existsSync(file) || !statSync(file).isFile()) {
        problems.push({
          setting: '--body',
          message: `${file} is not a file`,
          hint: 'give --body @path/to/body.json, or the body text itself',
        });
      } else body = { file };
    } else body = { text: flags.body };
    if (method === 'GET' || method === 'HEAD') {
      problems.push({
        setting: '--body',
        message: `a ${method} request carries no body`,
        hint: 'add --method POST (or PUT, PATCH), or drop --body',
      });
    }
  }
  if (flags.expectStatus !== undefined && !parseExpectStatus(flags.expectStatus)) {
    problems.push({
      setting: '--expect-status',
      message: `"${flags.expectStatus}" is not accepted`,
      hint: 'use statuses and ranges from 100 to 599, e.g. 200,201 or 200-299',
    });
  }
  const request: StudyRequest = {
    method,
    endpoint: endpoint ?? null,
    headers,
    ...(body ? { body } : {}),
    expectStatus: flags.expectStatus ?? null,
  };
  const flagOrDefault = (name: string, value: unknown, given: boolean) => {
    sources[name] = { value: value as SourcedValue['value'], source: given ? 'flag' : 'default' };
  };
  flagOrDefault('--endpoint', request.endpoint ?? '/statement?account=N', endpoint !== undefined);
  flagOrDefault('--method', method, flags.method !== undefined);
  if (flags.header?.length) flagOrDefault('--header', JSON.stringify(headers), true);
  if (body)
    flagOrDefault('--body', 'file' in body ? `@${body.file}` : `${body.text.length} characters`, true);
  if (flags.expectStatus !== undefined) flagOrDefault('--expect-status', flags.expectStatus, true);
  return { request, baseUrl };
}

/**
 * The scripts' settings for a request (scripts/lib/profiles.ts reads them). `bodyFile` is
 * where a body given as text was written (the run directory): both engines read the body
 * with open() from a file.
 */
export function requestEnv(request: StudyRequest, bodyFile: string | undefined): Record<string, string> {
  const env: Record<string, string> = { METHOD: request.method };
  if (request.endpoint !== null) {
    env.ENDPOINT = request.endpoint;
    env.ACCOUNTS = '0';
  }
  if (Object.keys(request.headers).length > 0) env.HEADERS = JSON.stringify(request.headers);
  const file = request.body && ('file' in request.body ? request.body.file : bodyFile);
  if (file) env.BODY_FILE = file;
  if (request.expectStatus !== null) env.EXPECT_STATUS = request.expectStatus;
  return env;
}

/** The flags that rebuild `request` (for `plateau confirm`). */
export function requestFlags(request: StudyRequest | undefined): RequestFlags {
  if (!request) return {};
  return {
    ...(request.endpoint !== null ? { endpoint: request.endpoint } : {}),
    method: request.method,
    ...(Object.keys(request.headers).length > 0
      ? { header: Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`) }
      : {}),
    ...(request.body ? { body: 'file' in request.body ? `@${request.body.file}` : request.body.text } : {}),
    ...(request.expectStatus !== null ? { expectStatus: request.expectStatus } : {}),
  };
}
