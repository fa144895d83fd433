// Transport errors as k6 reports them: its error_code and `error` text for each failure.
import { BLACKLISTED_IP_CODE, BLOCKED_HOSTNAME_CODE } from './destinations.ts';

/** Transport errors as k6 reports them: error_code and the `error` tag/field. */
export const ERRORS = {
  timeout: [1050, 'request timeout'],
  dialTimeout: [1211, 'dial: i/o timeout'],
  refused: [1212, 'dial: connection refused'],
  reset: [1220, 'read: connection reset by peer'],
  noHost: [1101, 'lookup: no such host'],
  tls: [1300, 'tls: handshake failure'],
  unknownAuthority: [
    1310,
    'tls: failed to verify certificate: x509: certificate signed by unknown authority',
  ],
  invalidUrl: [1020, 'invalid URL'],
} as const satisfies Record<string, readonly [number, string]>;

/** Node's codes for a certificate chain that does not lead to a trusted root (k6: 1310). */
const UNKNOWN_AUTHORITY = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** Maps an undici/Node error to k6's code and message. */
export function classify(error: unknown, timedOut: boolean): readonly [number, string] {
  if (timedOut) return ERRORS.timeout;
  const code = (error as { code?: string })?.code ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) return ERRORS.refused;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return ERRORS.dialTimeout;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return ERRORS.reset;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return ERRORS.noHost;
  if (code === BLOCKED_HOSTNAME_CODE) return [1111, message];
  if (code === BLACKLISTED_IP_CODE) return [1110, message];
  if (UNKNOWN_AUTHORITY.has(code)) return ERRORS.unknownAuthority;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const host = (error as { host?: string }).host ?? '';
    return [1311, `tls: failed to verify certificate: x509: certificate is not valid for ${host}`];
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.startsWith('CERT_')) {
    return [ERRORS.tls[0], `tls: ${message}`];
  }
  return [1000, message];
}
