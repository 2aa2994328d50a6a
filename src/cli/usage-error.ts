/** A mistake in the command line itself: exit code 2, with the usage. */
export class UsageError extends Error {}
