import { BackendUnavailableError, IndeterminateError } from '@fencekit/core';

/**
 * Sorts an ioredis failure into what the caller may assume. A server reply error, or a command that
 * could not even be written, did not take effect; anything else (timeout, connection lost with the
 * command in flight) may have.
 */
export function classifyFailure(
  backend: string,
  resource: string,
  operation: 'acquire' | 'extend' | 'release',
  error: unknown,
  /** Why the connection never came up, when it never did: then nothing was sent either. */
  neverConnected?: string,
): BackendUnavailableError | IndeterminateError {
  if (didNotTakeEffect(error)) {
    const message = errorMessage(error);
    // Said in words: a refused password is a configuration problem, not an outage.
    const shown = AUTH_REPLY.test(message) ? `authentication failed: ${message}` : message;
    return new BackendUnavailableError(backend, shown, { cause: error });
  }
  if (neverConnected !== undefined)
    return new BackendUnavailableError(backend, neverConnected, { cause: error });
  return new IndeterminateError(resource, operation, { cause: error });
}

const AUTH_REPLY = /^(WRONGPASS|NOAUTH)\b/;

export function didNotTakeEffect(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'ReplyError' || error.message.startsWith("Stream isn't writeable");
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}
