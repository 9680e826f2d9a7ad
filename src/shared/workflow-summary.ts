// C5: the one-line static summary each workflow is started with, shown in the Temporal UI's workflow list
// (staticSummary, at most 200 bytes; no event body, secret or personal data: ids, type, amount, provider).
const MAX_BYTES = 200;

/** Cuts on a character boundary so the summary stays within Temporal's 200-byte limit. */
export function clampSummary(text: string): string {
  if (Buffer.byteLength(text, 'utf8') <= MAX_BYTES) return text;
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(`${out}${ch}…`, 'utf8') > MAX_BYTES) break;
    out += ch;
  }
  return `${out}…`;
}

/** `payment.succeeded → we_01jd… · attempt 1`, or `whd_01jd… → we_01jd… · operator retry`. */
export function deliverySummary(d: { eventType?: string; endpointId?: string; deliveryId: string; note: string }): string {
  const target = d.endpointId ? `${d.eventType ?? d.deliveryId} → ${d.endpointId}` : d.deliveryId;
  return clampSummary(`${target} · ${d.note}`);
}

/** `EUR 19.99 · pi_3Q… · sandbox-stripe · payment.succeeded`; the amount arrives formatted by the caller. */
export function reconciliationSummary(r: {
  currency: string;
  amount: string;
  paymentReference: string;
  provider: string;
  eventType: string;
}): string {
  return clampSummary(`${r.currency} ${r.amount} · ${r.paymentReference} · ${r.provider} · ${r.eventType}`);
}
