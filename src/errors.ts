// Errors raised by the TypeScript layer carry a `code` like those from C++
// (ERR_FIREBRAND_*), so callers branch on one field whatever layer threw.
export type FirebrandErrorCode =
  | 'ERR_FIREBRAND_INVALID_ARGUMENT'
  | 'ERR_FIREBRAND_SHAPE_MISMATCH'
  | 'ERR_FIREBRAND_FILE'
  /** A data file's or record's content: a cell, a missing value, a category unseen at fit time. */
  | 'ERR_FIREBRAND_DATA'
  | 'ERR_FIREBRAND_INVALID_STATE'
  | 'ERR_FIREBRAND_TRACED_VALUE'
  | 'ERR_FIREBRAND_NON_FINITE'
  | 'ERR_FIREBRAND_TORCH'
  | 'ERR_FIREBRAND_OUT_OF_MEMORY'
  | 'ERR_FIREBRAND_INTERNAL'
  | 'ERR_FIREBRAND_CALLBACK'
  | 'ERR_FIREBRAND_CALLBACK_ABANDONED'
  | 'ERR_FIREBRAND_DISTRIBUTED'
  | 'ERR_FIREBRAND_NOT_EXPORTABLE'
  | 'ERR_FIREBRAND_NATIVE_LOAD';

export interface FirebrandError extends Error {
  code: FirebrandErrorCode;
}

export function firebrandError(code: FirebrandErrorCode, message: string): FirebrandError {
  return Object.assign(new Error(message), { code });
}
