// R3: what a merchant answered, made storable in a PostgreSQL text column and safe to print: valid UTF-8, no
// U+0000 (PostgreSQL refuses it in text), no control characters a terminal would act on, bounded length.

const REPLACEMENT = '\uFFFD';
// C0 controls except tab, LF and CR; DEL; C1 controls (ESC-like sequences in a CLI or log viewer).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The first bytes of a response body as storable text: invalid UTF-8 sequences and control characters become
 * U+FFFD, one per offending sequence or character. When `truncated` (the body went on past what was read), a
 * multi-byte character cut in half at the end is dropped rather than shown as U+FFFD. The result is at most
 * `bytes.length` characters and at most 3 × `bytes.length` bytes of UTF-8.
 */
export function excerptText(bytes: Uint8Array, truncated: boolean): string {
  // stream: true holds back an incomplete trailing sequence instead of replacing it; a fresh decoder per call.
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes, { stream: truncated });
  return text.replace(CONTROL, REPLACEMENT);
}

/** Any text of ours or a library's (an error message) made storable, at most `maxChars` UTF-16 units. */
export function storableText(text: string, maxChars = 300): string {
  const safe = text.replace(LONE_SURROGATE, REPLACEMENT).replace(CONTROL, REPLACEMENT);
  if (safe.length <= maxChars) return safe;
  let end = maxChars - 1; // room for the ellipsis
  if (/[\uD800-\uDBFF]/.test(safe[end - 1] ?? '')) end -= 1; // never cut a surrogate pair in half
  return `${safe.slice(0, end)}…`;
}
