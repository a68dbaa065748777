// Calls SourceTracer.Trace from the .proto with @grpc/grpc-js (no generated code).
// Usage: node trace_client.js HOST:PORT < request.json   -> prints the response as JSON.
// On an RPC error prints {"error": {"code": N, "details": "..."}} and exits 3.
'use strict';
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const definition = protoLoader.loadSync('source_tracer/v1/tracer.proto', {
  includeDirs: [PROTO_ROOT], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
});
const pkg = grpc.loadPackageDefinition(definition).source_tracer.v1;

let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  const client = new pkg.SourceTracer(process.argv[2], grpc.credentials.createInsecure());
  const deadline = new Date(Date.now() + 60000);
  client.Trace(request, { deadline }, (err, response) => {
    if (err) {
      process.stdout.write(JSON.stringify({ error: { code: err.code, details: err.details } }));
      process.exit(3);
    }
    process.stdout.write(JSON.stringify(response));
    client.close();
  });
});
