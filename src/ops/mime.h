#pragma once
// Content-Type from a file name's extension, for uploads of local files
// (as aws s3 cp and rclone do). "" when unknown; S3 then stores its default.

#include <string>
#include <string_view>

namespace ferry {

std::string GuessContentType(std::string_view path);

}  // namespace ferry
