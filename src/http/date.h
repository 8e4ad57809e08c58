#pragma once
// HTTP dates (RFC 9110 section 5.6.7): parsing all three formats a
// recipient must accept, formatting the one a sender must use. Locale
// independent; times are UTC seconds.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::http {

using SysSeconds = std::chrono::sys_seconds;

// "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate), "Sunday, 06-Nov-94
// 08:49:37 GMT" (obsolete RFC 850; two-digit years more than 50 years
// ahead are taken as the past century) and "Sun Nov  6 08:49:37 1994"
// (asctime). nullopt for anything else, e.g. "0" or "-1" in Expires.
std::optional<SysSeconds> ParseHttpDate(std::string_view s);

// IMF-fixdate.
std::string FormatHttpDate(SysSeconds t);

}  // namespace ferry::http
