const STATUS_LINE: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** The HTTP status line for a status code uWS's writeStatus needs. */
export function statusLine(status: number): string {
  return STATUS_LINE[status] ?? `${status} Error`;
}
