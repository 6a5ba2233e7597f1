import { BackendUnavailableError } from '@fencekit/core';
import {
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  EtcdUserNotFoundError,
  GRPCInvalidArgumentError,
  GRPCUnauthenticatedError,
} from 'etcd3';

/** Errors etcd answers *instead of* applying a request: the request certainly took no effect. */
export function isRefusal(error: unknown): boolean {
  return (
    error instanceof EtcdPermissionDeniedError ||
    error instanceof EtcdAuthenticationFailedError ||
    error instanceof EtcdInvalidAuthTokenError ||
    error instanceof EtcdUserNotFoundError ||
    error instanceof GRPCUnauthenticatedError ||
    error instanceof GRPCInvalidArgumentError
  );
}

export function toBackendError(action: string, error: unknown): BackendUnavailableError {
  return new BackendUnavailableError('etcd', `${action} failed: ${messageOf(error)}`, { cause: error });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
