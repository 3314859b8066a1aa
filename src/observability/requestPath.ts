/**
 * The path of a request target without its query string: what the log lines
 * and the traces record of a URL. Clients sometimes put secrets in the query
 * (an API key as `?api_key=`), and neither the logs nor the tracing backend
 * should keep them.
 */
export function pathWithoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
