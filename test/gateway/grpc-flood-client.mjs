// A flood of concurrent Export calls from a real grpc-js client, in its own process so the
// messages it holds while sending do not count in the gateway's memory.
// argv: address channels callsPerChannel messageBytes. Prints the status codes it got.
import * as grpc from '@grpc/grpc-js';

const [address, channels, calls, size] = process.argv.slice(2);
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const identity = (b) => b;

/** Even calls: a request with one resource and no spans (accepted); odd: a truncated one. */
function body(i) {
  const n = Number(size);
  const value = Buffer.alloc(n - 12, 0x78);
  // resource_spans { resource { attributes { key "b" value { string_value … } } } }
  const any = Buffer.concat([Buffer.from([0x0a]), varint(value.length), value]);
  const kv = Buffer.concat([Buffer.from([0x0a, 0x01, 0x62, 0x12]), varint(any.length), any]);
  const resource = Buffer.concat([Buffer.from([0x0a]), varint(kv.length), kv]);
  const rs = Buffer.concat([Buffer.from([0x0a]), varint(resource.length), resource]);
  const whole = Buffer.concat([Buffer.from([0x0a]), varint(rs.length), rs]);
  return i % 2 === 0 ? whole : Buffer.concat([Buffer.from([0x0a]), varint(whole.length * 2), whole]);
}

function varint(n) {
  const out = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

const codes = {};
let retryInfo = 0;
const pending = [];
for (let c = 0; c < Number(channels); c++) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
  });
  const done = [];
  for (let i = 0; i < Number(calls); i++) {
    done.push(
      new Promise((resolve) =>
        client.makeUnaryRequest(EXPORT, identity, identity, body(i), new grpc.Metadata(), (error) => {
          const code = error ? error.code : 0;
          codes[code] = (codes[code] ?? 0) + 1;
          const details = error?.metadata.get('grpc-status-details-bin')[0];
          if (details && Buffer.from(details).includes('google.rpc.RetryInfo')) retryInfo++;
          resolve();
        }),
      ),
    );
  }
  pending.push(Promise.all(done).then(() => client.close()));
}
await Promise.all(pending);
process.stdout.write(JSON.stringify({ codes, retryInfo }));
