/**
 * The class of a failure, for an operator's log: a socket error's code (`ECONNREFUSED`), the
 * code of the error behind it (fetch keeps the socket's on its TypeError's `cause`), a named
 * cause, else the error's own name (`TimeoutError`). Never its message, which may carry a
 * peer's own text or a credential. Shared by the DNS transports, the events sink and Redis.
 */
export function failureReason(err: unknown): string {
  const { code, name, cause } = (err ?? {}) as { code?: unknown; name?: unknown; cause?: { code?: unknown; name?: unknown } };
  if (typeof code === 'string') return code;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.name === 'string' && cause.name !== 'Error') return cause.name;
  return typeof name === 'string' ? name : 'error';
}
