#pragma once
// Time formats S3 uses on the wire.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::s3server {

using TimePoint = std::chrono::system_clock::time_point;

// "Tue, 02 Jan 2024 15:04:05 GMT" (Last-Modified, Date).
std::string HttpDate(TimePoint t);
// "2024-01-02T15:04:05.000Z" (XML LastModified, Initiated).
std::string IsoDate(TimePoint t);
// Parses "20240102T150405Z" (x-amz-date); nullopt when malformed.
std::optional<TimePoint> ParseAmzDate(std::string_view s);

}  // namespace ferry::s3server
