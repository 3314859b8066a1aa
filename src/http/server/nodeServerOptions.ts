/**
 * Node's http.createServer options: requireHostHeader is off (see
 * arrival/hostHeader.ts), and the header timeout holds. Node checks
 * headersTimeout (and requestTimeout) only every connectionsCheckingInterval,
 * 30 s by default, so a 2 s headers timeout would cut a slow client after up
 * to 32 s; checking at a quarter of the timeout (at most every second) keeps
 * the cut within 25% of the setting.
 */
export function nodeServerOptions(headersTimeoutMs: number) {
  return {
    requireHostHeader: false,
    headersTimeout: headersTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
  };
}
