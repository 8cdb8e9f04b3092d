/** Ends a switch over a union: a new member left unhandled is a type error here. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
