#pragma once
// Shared pieces of the command-line front end: size parsing, error output.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::cli {

// "64M", "1.5GiB", "4096", "16k" -> bytes (binary units: k = 1024).
Result<uint64_t> ParseSize(std::string_view text);

// Prints "ferry: <where>: <status>" on stderr and returns exit code 1.
int Fail(std::string_view where, const Status& s);

// Human "1.5 MiB".
std::string HumanBytes(uint64_t n);

}  // namespace ferry::cli
