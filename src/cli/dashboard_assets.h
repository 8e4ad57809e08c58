#pragma once
// The dashboard's static files (src/cli/dashboard/), built into the binary
// by cmake/embed_assets.cmake: served by `ferry server` at `/` and `/ui/`.

#include <cstddef>
#include <string_view>

namespace ferry::cli {

struct DashboardAsset {
  const char* path;          // the URL path, e.g. "/" or "/ui/app.js"
  const char* content_type;
  std::string_view body;
};

extern const DashboardAsset kDashboardAssets[];
extern const size_t kDashboardAssetCount;

}  // namespace ferry::cli
