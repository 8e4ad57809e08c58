// Presigned URLs from the AWS SDK for JavaScript v3's presigner, as a web
// application's back end hands them to browsers.
//   node presign_urls.mjs ENDPOINT KEY SECRET BUCKET EXPIRES METHOD:OBJECT...
// prints one JSON object {"METHOD:OBJECT": url, ...}.
import { S3Client, GetObjectCommand, PutObjectCommand, HeadObjectCommand, DeleteObjectCommand }
  from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

const [endpoint, key, secret, bucket, expires, ...wanted] = process.argv.slice(2);
const s3 = new S3Client({
  endpoint, region: "us-east-1", forcePathStyle: true,
  credentials: { accessKeyId: key, secretAccessKey: secret },
});
const commands = { GET: GetObjectCommand, PUT: PutObjectCommand, HEAD: HeadObjectCommand,
                   DELETE: DeleteObjectCommand };
const urls = {};
for (const w of wanted) {
  const [method, object] = w.split(/:(.*)/s);
  const Command = commands[method];
  if (!Command) throw new Error(`no presigned ${method}`);
  urls[w] = await getSignedUrl(s3, new Command({ Bucket: bucket, Key: object }),
                               { expiresIn: Number(expires) });
}
console.log(JSON.stringify(urls));
