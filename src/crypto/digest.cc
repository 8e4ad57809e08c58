#include "crypto/digest.h"

#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace ferry {
namespace {

// OpenSSL 3 looks an algorithm up by name (under a lock) every time one is
// used through EVP_md5()/EVP_sha256() or the one-shot HMAC(): a few
// microseconds per call, which on every signed request and every object
// was a visible share of a migration's CPU. ferry fetches each algorithm
// once and keeps a context per thread for one-shot digests and MACs.
const EVP_MD* FetchedMd(const char* name) {
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  if (md == nullptr) throw std::runtime_error(std::string("OpenSSL has no ") + name);
  return md;  // kept for the life of the process
}
const EVP_MD* Md5Md() {
  static const EVP_MD* md = FetchedMd("MD5");
  return md;
}
const EVP_MD* Sha256Md() {
  static const EVP_MD* md = FetchedMd("SHA2-256");
  return md;
}

// A call OpenSSL refused: only a broken or restricted installation (a
// FIPS-only provider has no MD5) gets here, and a digest of zeros must never
// stand in for a real one.
void Check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL: ") + what + " failed");
}

struct MacCtxFree {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MacCtx = std::unique_ptr<EVP_MAC_CTX, MacCtxFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

// A new HMAC-SHA256 context, not keyed yet.
MacCtx NewHmacSha256() {
  static EVP_MAC* hmac_alg = [] {
    EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (m == nullptr) throw std::runtime_error("OpenSSL has no HMAC");
    return m;  // kept for the life of the process
  }();
  MacCtx ctx(EVP_MAC_CTX_new(hmac_alg));
  if (!ctx) throw std::runtime_error("OpenSSL: cannot allocate an HMAC context");
  char digest[] = "SHA2-256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                         OSSL_PARAM_construct_end()};
  Check(EVP_MAC_CTX_set_params(ctx.get(), params), "HMAC-SHA256 setup");
  return ctx;
}

// Keys `ctx` with `key` (an empty key is still a key: OpenSSL reads a null
// pointer as "keep the last one").
void KeyHmac(EVP_MAC_CTX* ctx, std::string_view key) {
  static const unsigned char kNoKey = 0;
  const unsigned char* k =
      key.empty() ? &kNoKey : reinterpret_cast<const unsigned char*>(key.data());
  Check(EVP_MAC_init(ctx, k, key.size(), nullptr), "HMAC key");
}

Sha256Digest FinishHmac(EVP_MAC_CTX* ctx, std::string_view data) {
  Sha256Digest out{};
  size_t len = 0;
  Check(EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()),
        "HMAC update");
  Check(EVP_MAC_final(ctx, out.data(), &len, out.size()), "HMAC final");
  return out;
}

struct ThreadContexts {
  ThreadContexts() : md(EVP_MD_CTX_new()), hmac(NewHmacSha256()) {
    if (!md) throw std::runtime_error("OpenSSL: cannot allocate a digest context");
  }
  MdCtx md;
  MacCtx hmac;  // HMAC-SHA256; keyed on each use
};

ThreadContexts& Contexts() {
  thread_local ThreadContexts c;
  return c;
}

template <size_t N>
std::array<uint8_t, N> Digest(const EVP_MD* md, std::string_view data) {
  std::array<uint8_t, N> out{};
  unsigned int len = 0;
  EVP_MD_CTX* ctx = Contexts().md.get();
  Check(EVP_DigestInit_ex2(ctx, md, nullptr), "digest init");
  Check(EVP_DigestUpdate(ctx, data.data(), data.size()), "digest update");
  Check(EVP_DigestFinal_ex(ctx, out.data(), &len), "digest final");
  return out;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) { return Digest<32>(Sha256Md(), data); }
Md5Digest Md5(std::string_view data) { return Digest<16>(Md5Md(), data); }

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  EVP_MAC_CTX* ctx = Contexts().hmac.get();
  KeyHmac(ctx, key);
  return FinishHmac(ctx, data);
}

std::array<uint8_t, 20> HmacSha1(std::string_view key, std::string_view data) {
  std::array<uint8_t, 20> out{};
  size_t n = 0;
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA1", nullptr, key.data(), key.size(),
                reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
                out.size(), &n) == nullptr ||
      n != out.size()) {
    throw std::runtime_error("OpenSSL refused HMAC-SHA1");
  }
  return out;
}

struct HmacSha256Key::Impl {
  MacCtx ctx;
};

HmacSha256Key::HmacSha256Key(std::string_view key) : impl_(new Impl{NewHmacSha256()}) {
  KeyHmac(impl_->ctx.get(), key);
}

HmacSha256Key::~HmacSha256Key() = default;

Sha256Digest HmacSha256Key::Mac(std::string_view data) {
  // Restarts from the keyed state (no key given: the inner and outer pads
  // computed when keyed are reused).
  Check(EVP_MAC_init(impl_->ctx.get(), nullptr, 0, nullptr), "HMAC restart");
  return FinishHmac(impl_->ctx.get(), data);
}

std::string HexLower(const uint8_t* data, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(n * 2, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 15];
  }
  return out;
}

bool IsMd5Hex(std::string_view etag) {
  return etag.size() == 32 && etag.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

namespace {
int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}
}  // namespace

namespace {
// Appends the bytes that `hex` (an even number of hex digits) spells.
void AppendHexBytes(std::string_view hex, std::string* out) {
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    *out += static_cast<char>(HexNibble(hex[i]) * 16 + HexNibble(hex[i + 1]));
  }
}
}  // namespace

std::string MultipartEtag(const std::vector<std::string>& part_md5_hex) {
  std::string binary;
  binary.reserve(part_md5_hex.size() * 16);
  for (const auto& hex : part_md5_hex) AppendHexBytes(hex, &binary);
  return HexLower(Md5(binary)) + "-" + std::to_string(part_md5_hex.size());
}

std::string ContentMd5FromHex(std::string_view md5_hex) {
  std::string raw;
  AppendHexBytes(md5_hex, &raw);
  return Base64Encode(raw);
}

std::string Base64Encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(data.data()),
                          static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool Base64Decode(std::string_view in, std::string* out) {
  if (in.size() % 4 != 0) return false;
  std::string buf(3 * in.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(buf.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes.
  if (!in.empty() && in.back() == '=') --len;
  if (in.size() >= 2 && in[in.size() - 2] == '=') --len;
  buf.resize(len);
  *out = std::move(buf);
  return true;
}

struct StreamingDigest::Impl {
  MdCtx ctx;
  const EVP_MD* md;
  void Start() { Check(EVP_DigestInit_ex2(ctx.get(), md, nullptr), "digest init"); }
};

StreamingDigest::StreamingDigest(Kind kind)
    : impl_(new Impl{MdCtx(EVP_MD_CTX_new()), kind == Kind::kMd5 ? Md5Md() : Sha256Md()}) {
  if (!impl_->ctx) throw std::runtime_error("OpenSSL: cannot allocate a digest context");
  impl_->Start();
}

StreamingDigest::~StreamingDigest() = default;

void StreamingDigest::Update(std::string_view data) {
  Check(EVP_DigestUpdate(impl_->ctx.get(), data.data(), data.size()), "digest update");
}

std::string StreamingDigest::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  Check(EVP_DigestFinal_ex(impl_->ctx.get(), out, &len), "digest final");
  impl_->Start();
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace ferry
