// The deterministic account statement the reference service renders and gzips.
import { gzipSync } from 'node:zlib';
import { seededRandom } from '../lib/seeded-random.ts';

const DESCRIPTIONS = [
  'Card payment GROCER',
  'Salary ACME LTD',
  'Direct debit ELECTRIC CO',
  'Transfer to savings',
  'Card payment COFFEE HOUSE',
  'ATM withdrawal',
  'Standing order RENT',
  'Refund ONLINE STORE',
  'Card payment FUEL STATION',
  'Interest',
] as const;

/**
 * Renders the statement of `account` as JSON text of at least `payloadKb` KiB (the
 * transactions are added until the size is reached, so it overshoots by under one line).
 * Deterministic: equal inputs give identical text.
 */
export function renderStatement(account: number, payloadKb: number): string {
  const random = seededRandom(account * 2654435761 + 1);
  const targetBytes = payloadKb * 1024;
  const header = `{"account":${account},"currency":"EUR","period":"2026-01","transactions":[`;
  const parts: string[] = [header];
  let size = header.length;
  let balance = Math.round(random() * 1_000_000) / 100;
  const start = Date.UTC(2026, 0, 1);
  for (let i = 0; size < targetBytes - 2; i++) {
    const amount = Math.round((random() - 0.6) * 50_000) / 100;
    balance = Math.round((balance + amount) * 100) / 100;
    const day = new Date(start + Math.floor(random() * 31) * 86_400_000).toISOString().slice(0, 10);
    const description = DESCRIPTIONS[Math.floor(random() * DESCRIPTIONS.length)];
    const ref = Math.floor(random() * 1e12)
      .toString(36)
      .toUpperCase();
    const line = `${i === 0 ? '' : ','}{"id":${i},"date":"${day}","description":"${description}","reference":"${ref}","amount":${amount},"balance":${balance}}`;
    parts.push(line);
    size += line.length;
  }
  parts.push(']}');
  return parts.join('');
}

/**
 * Renders and gzips a statement synchronously, on the event loop: a few ms of CPU per
 * request is part of the service's model (it is what runs between a connection release
 * and the next waiter resuming).
 */
export function renderStatementGzip(account: number, payloadKb: number): Buffer {
  return gzipSync(renderStatement(account, payloadKb), { level: 6 });
}

/** Highest account id plus one. */
export const ACCOUNT_LIMIT = 1_000_000_000;

/** Parses the `account` query value: an integer 0 ≤ id < 10^9 written in plain digits. */
export function parseAccount(raw: string | null): number | undefined {
  if (raw === null || !/^\d{1,10}$/.test(raw)) return undefined;
  const id = Number(raw);
  return id < ACCOUNT_LIMIT ? id : undefined;
}
