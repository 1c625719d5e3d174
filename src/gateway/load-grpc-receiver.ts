/**
 * The OTLP/gRPC receiver, loaded when a gRPC listener is asked for. `@grpc/grpc-js` (with
 * protobufjs and the rest of its tree, and protobufjs's install script) is an optional peer
 * dependency: an application that only uses the span processor, the CLI or OTLP/HTTP does not
 * install it.
 */
export async function loadGrpcReceiver(): Promise<typeof import('./grpc-receiver.js')> {
  try {
    return await import('./grpc-receiver.js');
  } catch (err) {
    if (isMissing(err, '@grpc/grpc-js')) {
      throw new Error(
        'OTLP/gRPC needs the optional package @grpc/grpc-js, which is not installed: run ' +
          '`npm install @grpc/grpc-js`, or turn the gRPC listener off (`toolwatch serve --grpc off`)',
      );
    }
    throw err;
  }
}

/** Node's error for an import of a package that is not installed (ESM or CommonJS wording). */
function isMissing(err: unknown, name: string): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`))
  );
}
