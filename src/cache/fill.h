#pragma once
// The cache's fill path as pure functions: what is asked upstream, what a
// 304 does to a stale entry, the object a response makes, whether it may be
// stored and whether it is compressed here. Proxy::FillFromUpstream runs
// them in that order around its one side effect, the upstream exchange.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/freshness.h"
#include "cache/hot_set.h"
#include "cache/transcode_policy.h"
#include "http/headers.h"

namespace ferry::cache {

inline constexpr std::string_view kTierHeader = "X-Ferry-Tier";      // request: "stored"
inline constexpr std::string_view kStoredHeader = "X-Ferry-Stored";  // response: "zstd; length=N"

// The request a fill sends: the client's end-to-end fields without those
// that would make the answer this client's alone (Accept-Encoding: the
// cache wants the identity representation, to transcode it once; its
// conditionals; Range), plus the stale entry's validators when there is one.
http::Headers UpstreamRequestHeaders(const http::Headers& client, const EntryMeta* stale);

// A stale entry made fresh by a 304 (RFC 9111 4.3.4): its stored body under
// every end-to-end field of the 304 but those that describe the stored
// bytes (Content-Encoding, Content-Type, the tier marker), with the new
// exchange's times. Not yet Prepare()d.
CachedObject MergeNotModified(const CachedObject& stale, const http::Headers& not_modified,
                              int64_t request_time, int64_t response_time);

// The object a complete response makes (not yet compressed here, not yet
// Prepare()d). A parent tier's marker "zstd; length=N" (kStoredHeader)
// makes it a stored zstd object of logical length N, taken as is; a marker
// whose body is not a zstd frame of that length is kProtocol.
Result<CachedObject> ObjectFromResponse(std::string key, int status, const http::Headers& headers,
                                        std::string body, int64_t request_time, int64_t response_time);

// Whether the object may be stored (RFC 9111 3 through DecideStore): only
// 2xx, never for a request with Authorization unless the response allows.
bool MayStore(const http::Headers& request, const CacheControl& request_cc, const EntryMeta& m,
              const CacheSettings& settings);

// Whether to zstd-compress the identity body of a storable object here.
bool ShouldCompress(const EntryMeta& m, uint64_t body_size, const TranscodeSettings& settings);

// Whether a stale entry may answer when upstream fails (stale-if-error,
// RFC 5861, as the default): not when it must be revalidated.
bool MayServeStale(const CachedObject& stale);

// Gives an object its id and what hits need from its headers, parsed once.
void Prepare(CachedObject* o, const CacheSettings& s);

// "zstd; length=N" -> N; nullopt for anything else.
std::optional<uint64_t> ParseStoredMarker(std::string_view v);

}  // namespace ferry::cache
