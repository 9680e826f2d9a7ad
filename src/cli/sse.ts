// A Server-Sent Events reader (the text/event-stream format of the HTML standard) for `apipay listen`: fields
// `event`, `data` (lines joined by \n), `id`, `retry`; comment lines (":") ignored; a blank line ends a message.
export interface SseMessage {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let message: { event?: string; data: string[]; id?: string; retry?: number } = { data: [] };
  const lines = function* (final: boolean) {
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (end < 0 || (!final && end === buffer.length - 1 && buffer.endsWith('\r'))) return;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      yield line;
    }
  };
  const take = function* (final: boolean): Generator<SseMessage> {
    for (const line of lines(final)) {
      if (line === '') {
        if (message.data.length > 0 || message.id !== undefined) {
          yield {
            event: message.event ?? 'message',
            data: message.data.join('\n'),
            ...(message.id !== undefined ? { id: message.id } : {}),
            ...(message.retry !== undefined ? { retry: message.retry } : {}),
          };
        }
        message = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') message.event = value;
      else if (field === 'data') message.data.push(value);
      else if (field === 'id' && !value.includes('\0')) message.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
    }
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* take(false);
  }
  buffer += decoder.decode();
  yield* take(true); // an unterminated last message is dropped, as the standard says
}
