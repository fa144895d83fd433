import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BLACKLISTED_IP_CODE, BLOCKED_HOSTNAME_CODE, DestinationRules } from './destinations.ts';

test('blockHostnames: exact names and leading-* patterns, case-insensitive; nothing else matches', () => {
  const rules = new DestinationRules(['*.internal.test', 'admin.example.com'], []);
  assert.equal(rules.empty, false);
  assert.equal(rules.checkHostname('API.Internal.Test')?.code, BLOCKED_HOSTNAME_CODE);
  assert.equal(
    rules.checkHostname('api.internal.test')?.message,
    'hostname (api.internal.test) is in a blocked pattern (*.internal.test)',
  );
  assert.equal(rules.checkHostname('admin.example.com')?.code, BLOCKED_HOSTNAME_CODE);
  for (const allowed of ['internal.test', 'example.com', 'www.admin.example.com', 'internal.test.evil']) {
    assert.equal(rules.checkHostname(allowed), undefined, allowed);
  }
});

test('blacklistIPs: IPv4 and IPv6 ranges, each address checked against its own family', () => {
  const rules = new DestinationRules([], ['10.0.0.0/8', 'fd00::/8', '192.168.1.7/32']);
  assert.equal(rules.checkAddress('10.1.2.3', 'ipv4')?.code, BLACKLISTED_IP_CODE);
  assert.equal(
    rules.checkAddress('10.1.2.3', 'ipv4')?.message,
    'IP (10.1.2.3) is in a blacklisted range (10.0.0.0/8)',
  );
  assert.equal(rules.checkAddress('fd12::1', 'ipv6')?.code, BLACKLISTED_IP_CODE);
  assert.equal(rules.checkAddress('192.168.1.7', 'ipv4')?.code, BLACKLISTED_IP_CODE);
  for (const [address, family] of [
    ['11.0.0.1', 'ipv4'],
    ['192.168.1.8', 'ipv4'],
    ['fe80::1', 'ipv6'],
    ['::1', 'ipv6'],
  ] as const) {
    assert.equal(rules.checkAddress(address, family), undefined, address);
  }
  assert.equal(new DestinationRules([], []).empty, true);
});
