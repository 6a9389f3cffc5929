// The gRPC plumbing the Node scripts share: the protos loaded at run time (nothing is
// generated) and unary calls as promises, always with a deadline.
"use strict";

const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

// supportenv.v1 from protosDir. Enums travel by name, int64 as decimal strings, bytes as Buffers.
function loadApi(protosDir) {
  const definition = protoLoader.loadSync(["supportenv/v1/env.proto", "supportenv/v1/grader.proto"], {
    includeDirs: [protosDir],
    keepCase: true, // field names exactly as in the .proto files (snake_case)
    enums: String, // enum values by name, e.g. "ISSUE_CATEGORY_BILLING"
    longs: String, // int64 seed as a decimal string, never a lossy number
    defaults: true, // unset scalars come back as their defaults
    oneofs: true, // decoded Actions carry a virtual `kind` naming the set field
  });
  return grpc.loadPackageDefinition(definition).supportenv.v1;
}

// Unary call as a promise; a failure names the method and its status.
function call(client, method, request, deadlineMs) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + deadlineMs);
    client[method](request, { deadline }, (err, response) => {
      if (err) {
        const code = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || err.code;
        reject(new Error(`${method} failed: ${code}: ${err.details || err.message}`));
      } else {
        resolve(response);
      }
    });
  });
}

module.exports = { grpc, loadApi, call };
