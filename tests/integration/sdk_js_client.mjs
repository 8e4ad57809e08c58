// The AWS SDK for JavaScript v3 (npm, testing/peers) as an application uses
// it, at its defaults: flexible checksums on (CRC32 for PutObject, sent as
// an aws-chunked trailer for a stream), SigV4 with the payload unsigned.
//
//   node sdk_js_client.mjs ENDPOINT KEY SECRET BUCKET PREFIX
//
// Steps, each printed "ok STEP" or failing the run with its error: a
// PutObject of a buffer and of a stream (aws-chunked with a trailing
// checksum), a wrong checksum refused with BadDigest and nothing stored, a
// multipart upload by lib-storage, GetObject (bytes compared), HeadObject,
// ListObjectsV2, presigned URLs (the SDK's presigner) used with plain fetch
// for PUT, GET, HEAD and DELETE, one tampered with and one expired, then
// DeleteObject; checksums asked for (SHA256) and the default CRC32 trailer
// kept and returned with ChecksumMode, the SDK checking each GET's body.
// The first line names the SDK's version.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import {
  S3Client, PutObjectCommand, GetObjectCommand, HeadObjectCommand,
  ListObjectsV2Command, DeleteObjectCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

const [endpoint, key, secret, bucket, prefix] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(require.resolve("@aws-sdk/client-s3/package.json"))).version;
console.log(`sdk @aws-sdk/client-s3 ${version} node ${process.version}`);

const s3 = new S3Client({
  endpoint, region: "us-east-1", forcePathStyle: true, maxAttempts: 1,
  credentials: { accessKeyId: key, secretAccessKey: secret },
});
// What the SDK sent, per request, for the log: its payload mode and encoding.
s3.middlewareStack.add((next) => async (args) => {
  const h = args.request.headers;
  console.log(`sent ${args.request.method} ${args.request.path} ` +
    `${h["x-amz-content-sha256"] ?? "-"} ${h["content-encoding"] ?? "-"} ${h["x-amz-trailer"] ?? "-"}`);
  return next(args);
}, { step: "finalizeRequest", priority: "low" });

function body(n, seed) {
  const b = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 24; }
  return b;
}
const md5 = (b) => createHash("md5").update(b).digest("hex");
async function bytesOf(key) {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body.transformToByteArray());
}
function expectSame(got, want, what) {
  if (!got.equals(want)) throw new Error(`${what}: ${got.length} bytes, md5 ${md5(got)}; want ${want.length}, ${md5(want)}`);
}

const steps = {
  async "put-buffer"() {
    const b = body(100000, 1);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}buffer`, Body: b }));
    expectSame(await bytesOf(`${prefix}buffer`), b, "buffer");
  },
  async "put-stream"() {
    const b = body(300000, 2);
    await s3.send(new PutObjectCommand({
      Bucket: bucket, Key: `${prefix}stream`, Body: Readable.from([b.subarray(0, 70000), b.subarray(70000)]),
      ContentLength: b.length,
    }));
    expectSame(await bytesOf(`${prefix}stream`), b, "stream");
  },
  async "bad-checksum"() {
    try {
      await s3.send(new PutObjectCommand({
        Bucket: bucket, Key: `${prefix}corrupt`, Body: body(1000, 3), ChecksumCRC32: "AAAAAA==",
      }));
    } catch (e) {
      if (e.name !== "BadDigest") throw new Error(`a wrong checksum got ${e.name}: ${e.message}`);
      try {
        await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}corrupt` }));
      } catch (e2) {
        if (e2.$metadata?.httpStatusCode === 404) return;
        throw e2;
      }
      throw new Error("a body refused with BadDigest was stored");
    }
    throw new Error("a wrong checksum was accepted");
  },
  async "multipart"() {
    const b = body(12 * 1024 * 1024 + 333, 4);
    const up = new Upload({
      client: s3, params: { Bucket: bucket, Key: `${prefix}multipart`, Body: Readable.from([b]) },
      partSize: 5 * 1024 * 1024, queueSize: 2,
    });
    await up.done();
    expectSame(await bytesOf(`${prefix}multipart`), b, "multipart");
  },
  async "head"() {
    const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}stream` }));
    if (h.ContentLength !== 300000) throw new Error(`HEAD says ${h.ContentLength} bytes`);
  },
  async "checksums"() {
    // A checksum asked for is verified, kept and returned: HEAD says it, and
    // a GET with ChecksumMode has the SDK check the body against it.
    const b = body(70000, 6);
    const sha256 = createHash("sha256").update(b).digest("base64");
    const put = await s3.send(new PutObjectCommand({
      Bucket: bucket, Key: `${prefix}sha256`, Body: b, ChecksumAlgorithm: "SHA256",
    }));
    if (put.ChecksumSHA256 !== sha256) throw new Error(`PUT answered SHA256 ${put.ChecksumSHA256}, want ${sha256}`);
    const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}sha256`, ChecksumMode: "ENABLED" }));
    if (h.ChecksumSHA256 !== sha256 || h.ChecksumType !== "FULL_OBJECT") {
      throw new Error(`HEAD answered SHA256 ${h.ChecksumSHA256} ${h.ChecksumType}, want ${sha256} FULL_OBJECT`);
    }
    const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}sha256`, ChecksumMode: "ENABLED" }));
    expectSame(Buffer.from(await g.Body.transformToByteArray()), b, "GET with ChecksumMode");
    // The stream put earlier went with the SDK's default CRC32 trailer.
    const s = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}stream`, ChecksumMode: "ENABLED" }));
    if (!s.ChecksumCRC32) throw new Error(`the stream's CRC32 trailer was not kept: ${JSON.stringify(s)}`);
    const sg = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}stream`, ChecksumMode: "ENABLED" }));
    expectSame(Buffer.from(await sg.Body.transformToByteArray()), body(300000, 2), "stream GET with ChecksumMode");
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}sha256` }));
  },
  async "list"() {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    const keys = (r.Contents ?? []).map((o) => o.Key).sort();
    const want = ["buffer", "multipart", "stream"].map((k) => prefix + k);
    if (JSON.stringify(keys) !== JSON.stringify(want)) throw new Error(`listed ${keys}`);
  },
  async "presign"() {
    const b = body(50000, 5);
    const k = `${prefix}presigned`;
    const url = (Command, extra = {}, expiresIn = 300) =>
      getSignedUrl(s3, new Command({ Bucket: bucket, Key: k, ...extra }), { expiresIn });
    let r = await fetch(await url(PutObjectCommand), { method: "PUT", body: b });
    if (r.status !== 200) throw new Error(`presigned PUT: ${r.status} ${await r.text()}`);
    r = await fetch(await url(GetObjectCommand));
    expectSame(Buffer.from(await r.arrayBuffer()), b, "presigned GET");
    r = await fetch(await url(HeadObjectCommand), { method: "HEAD" });
    if (r.status !== 200 || r.headers.get("content-length") !== String(b.length)) {
      throw new Error(`presigned HEAD: ${r.status}, ${r.headers.get("content-length")} bytes`);
    }
    const tampered = (await url(GetObjectCommand)).replace(/X-Amz-Expires=\d+/, "X-Amz-Expires=604800");
    r = await fetch(tampered);
    if (r.status !== 403 || !(await r.text()).includes("SignatureDoesNotMatch")) {
      throw new Error(`a tampered presigned URL got ${r.status}`);
    }
    const expiring = await url(GetObjectCommand, {}, 1);
    await new Promise((done) => setTimeout(done, 2100));
    r = await fetch(expiring);
    if (r.status !== 403 || !(await r.text()).includes("expired")) {
      throw new Error(`an expired presigned URL got ${r.status}`);
    }
    r = await fetch(await url(DeleteObjectCommand), { method: "DELETE" });
    if (r.status !== 204) throw new Error(`presigned DELETE: ${r.status} ${await r.text()}`);
    r = await fetch(await url(GetObjectCommand));
    if (r.status !== 404) throw new Error(`GET after the presigned DELETE: ${r.status}`);
  },
  async "delete"() {
    for (const k of ["buffer", "multipart", "stream"]) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: prefix + k }));
    }
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    if ((r.Contents ?? []).length !== 0) throw new Error(`${r.Contents.length} left after delete`);
  },
};

for (const [name, step] of Object.entries(steps)) {
  try {
    await step();
    console.log(`ok ${name}`);
  } catch (e) {
    console.log(`FAILED ${name}: ${e.name}: ${e.message}`);
    process.exit(1);
  }
}
