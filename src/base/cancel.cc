#include "base/cancel.h"

#include <atomic>

namespace ferry {
namespace {
std::atomic<bool> g_cancelled{false};
}  // namespace

void RequestCancel() { g_cancelled.store(true, std::memory_order_relaxed); }
bool CancelRequested() { return g_cancelled.load(std::memory_order_relaxed); }
Status CancelledStatus() { return Status::Cancelled("interrupted"); }

}  // namespace ferry
